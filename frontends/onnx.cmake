# onnx.cmake — ONNX import: C bindings generated from onnx.proto with
# protoc-c at build time (never committed), compiled into ipusim_core, which
# then links protobuf-c.  Included from the top-level CMakeLists.txt after
# ipusim_core is defined.
#
# Debian 12: libprotobuf-c-dev protobuf-c-compiler libonnx-dev (the last
# ships /usr/include/onnx/onnx.proto).
pkg_check_modules(PROTOBUF_C REQUIRED IMPORTED_TARGET libprotobuf-c)
find_program(PROTOC_C_EXECUTABLE NAMES protoc-c REQUIRED)
find_file(IPUSIM_ONNX_PROTO onnx.proto PATHS /usr/include/onnx /usr/local/include/onnx NO_DEFAULT_PATH REQUIRED
  DOC "onnx.proto to generate the ONNX bindings from")

get_filename_component(IPUSIM_ONNX_PROTO_DIR ${IPUSIM_ONNX_PROTO} DIRECTORY)
set(IPUSIM_ONNX_GEN_DIR ${CMAKE_BINARY_DIR}/frontends/generated)
add_custom_command(
  OUTPUT ${IPUSIM_ONNX_GEN_DIR}/onnx.pb-c.c ${IPUSIM_ONNX_GEN_DIR}/onnx.pb-c.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${IPUSIM_ONNX_GEN_DIR}
  COMMAND ${PROTOC_C_EXECUTABLE} --c_out=${IPUSIM_ONNX_GEN_DIR} -I${IPUSIM_ONNX_PROTO_DIR} ${IPUSIM_ONNX_PROTO}
  DEPENDS ${IPUSIM_ONNX_PROTO}
  COMMENT "protoc-c: generating ONNX bindings from ${IPUSIM_ONNX_PROTO}"
  VERBATIM)

target_sources(ipusim_core PRIVATE ${IPUSIM_ONNX_GEN_DIR}/onnx.pb-c.c)
# Generated code: its style is protoc-c's, so our warning flags do not apply.
set_source_files_properties(${IPUSIM_ONNX_GEN_DIR}/onnx.pb-c.c PROPERTIES COMPILE_OPTIONS "-w")
target_include_directories(ipusim_core PUBLIC ${IPUSIM_ONNX_GEN_DIR})
target_compile_definitions(ipusim_core PUBLIC IPUSIM_HAVE_ONNX=1)
target_link_libraries(ipusim_core PUBLIC PkgConfig::PROTOBUF_C)
