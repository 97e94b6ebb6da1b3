# The addon, with libsup's C++ sources (vendor/lib, copied from the
# repository's lib/ by scripts/build.js) compiled into it. libsup runs on
# Node's own libuv: no -luv, the executable exports uv_*, and the headers are
# Node's (include/node/uv.h, first on the include path). cJSON is the
# system's. sup-sentinel is built beside sup.node, where libsup looks for it
# first (it finds its own file with dladdr); its work is the library's
# sentinel_run.cpp, as in lib/meson.build.
{
  "targets": [
    {
      "target_name": "sup",
      "sources": [
        "src/sup_node.c",
        "<!@(node -p \"require('fs').readdirSync('vendor/lib').filter(f => f.endsWith('.cpp')).map(f => 'vendor/lib/' + f).join(' ')\")"
      ],
      "include_dirs": ["vendor/include", "vendor/lib"],
      "defines": ["SUP_BUILDING", "_GNU_SOURCE", "SUP_LIBEXECDIR=\"/usr/local/libexec\""],
      "cflags": ["-fvisibility=hidden"],
      "cflags_c": ["-std=gnu11"],
      "cflags_cc": ["-std=gnu++17", "-fexceptions", "-frtti", "-fno-gnu-unique"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++14", "-std=gnu++1y", "-std=gnu++20"],
      "ldflags": ["-Wl,--version-script=<(module_root_dir)/src/exports.map", "-Wl,--exclude-libs,ALL"],
      "libraries": ["-lcjson", "-lpthread", "-ldl"]
    },
    {
      "target_name": "sup-sentinel",
      "type": "executable",
      "sources": ["vendor/lib/sup-sentinel.c", "vendor/lib/sentinel_run.cpp"],
      "include_dirs": ["vendor/lib"],
      "cflags_c": ["-std=gnu11"],
      "cflags_cc": ["-std=gnu++17"],
      "cflags_cc!": ["-std=gnu++14", "-std=gnu++1y", "-std=gnu++20"]
    }
  ]
}
