# embed.cmake — turns the kernel library's assembly sources into a C file
# (run by CMake at build time, `cmake -P`), so that the ipusim binary
# carries its codelets and needs no source tree at run time.
#   -DOUT=file.c -DSOURCES="a.S;b.S"
set(body "/* Generated from the kernel library sources by embed.cmake; do not edit. */\n")
string(APPEND body "#include \"workloads/codelets/codelet_library.h\"\n\n")
set(table "")
set(i 0)
foreach(src ${SOURCES})
  get_filename_component(name ${src} NAME)
  file(READ ${src} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(APPEND body "static const char source_${i}[] = {${hex}0};\n")
  string(APPEND table "    { \"${name}\", source_${i} },\n")
  math(EXPR i "${i} + 1")
endforeach()
string(APPEND body "\nconst codelet_source codelet_sources[] = {\n${table}};\n")
string(APPEND body "const unsigned codelet_source_count = ${i};\n")
file(WRITE ${OUT}.tmp "${body}")
file(RENAME ${OUT}.tmp ${OUT})
