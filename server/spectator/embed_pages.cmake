# Writes a C++ source that holds the spectator pages as string literals, so the server serves them from
# its own binary (no files to install, nothing fetched). Run by the build:
#   cmake -DOUT=page_assets.cpp -DPAGES="name1=path1;name2=path2" -P embed_pages.cmake
set(text "// Generated from server/spectator/pages by embed_pages.cmake: do not edit.\n")
string(APPEND text "#include \"server/spectator/page_assets.hpp\"\n\nnamespace shiftcast {\n")
foreach(entry ${PAGES})
  string(REPLACE "=" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 path)
  file(READ "${path}" content)
  string(FIND "${content}" ")shiftcast_page\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} holds the literal's delimiter")
  endif()
  string(APPEND text "\nstd::string_view ${name}() {\n  return R\"shiftcast_page(${content})shiftcast_page\";\n}\n")
endforeach()
string(APPEND text "\n}  // namespace shiftcast\n")
file(WRITE "${OUT}.tmp" "${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
