# SPDX-License-Identifier: MIT
# Stages a stylesheet without its comments and indentation (the page's first load; the source in
# web/ keeps them). Safe for web/style.css: no string or url() in it holds "/*" or a newline.
#   cmake -DINPUT=<style.css> -DOUTPUT=<site/style.css> -P minify_css.cmake
file(READ "${INPUT}" css)
string(FIND "${css}" "url(" url)
if(NOT url EQUAL -1)
  message(FATAL_ERROR "${INPUT}: url() found; this minifier does not read strings")
endif()
string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" css "${css}")
string(REGEX REPLACE "\n[ \t]*" "\n" css "${css}")
string(REGEX REPLACE "\n+" "\n" css "${css}")
file(WRITE "${OUTPUT}" "${css}")
