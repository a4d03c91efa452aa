# The simulator core's C sources: every module of the fixed top-level folders
# and their sub-folders, less the command line's main().  Included by the top
# level and by tests/fuzz (which sets IPUSIM_ROOT when it is built alone).
if(NOT DEFINED IPUSIM_ROOT)
  set(IPUSIM_ROOT ${CMAKE_SOURCE_DIR})
endif()
file(GLOB_RECURSE IPUSIM_CORE_SOURCES CONFIGURE_DEPENDS
  ${IPUSIM_ROOT}/sim/*.c
  ${IPUSIM_ROOT}/memmodel/*.c
  ${IPUSIM_ROOT}/isa/*.c
  ${IPUSIM_ROOT}/exchange/*.c
  ${IPUSIM_ROOT}/workloads/*.c
  ${IPUSIM_ROOT}/frontends/*.c
  ${IPUSIM_ROOT}/validation/*.c)
list(FILTER IPUSIM_CORE_SOURCES EXCLUDE REGEX "/frontends/cli/main\\.c$")
list(SORT IPUSIM_CORE_SOURCES)
