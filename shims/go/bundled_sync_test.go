package sup_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The copy of libsup's sources that -tags sup_bundled compiles (csrc/, and
// a bundled_NAME.cpp per source) must be the checkout's lib/ and include/:
// `go generate` (gen_bundled.sh) refreshes it.
func TestBundledSourcesInSync(t *testing.T) {
	lib, _ := filepath.Glob("../../lib/*.[ch]pp")
	if len(lib) == 0 {
		t.Skip("not inside the sup checkout")
	}
	want := map[string]string{"sup.h": "../../include/sup.h"}
	for _, f := range lib {
		want[filepath.Base(f)] = f
	}
	have, _ := filepath.Glob("csrc/*")
	var names []string
	for _, f := range have {
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	if len(names) != len(want) {
		t.Fatalf("csrc/ holds %d files, lib/ and include/ %d: run go generate", len(names), len(want))
	}
	for _, n := range names {
		src, ok := want[n]
		if !ok {
			t.Fatalf("csrc/%s is not in lib/: run go generate", n)
		}
		a, err1 := os.ReadFile(src)
		b, err2 := os.ReadFile("csrc/" + n)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("csrc/%s differs from %s: run go generate", n, src)
		}
		if base, ok := strings.CutSuffix(n, ".cpp"); ok {
			w, err := os.ReadFile("bundled_" + base + ".cpp")
			if err != nil || !bytes.Contains(w, []byte(`#include "csrc/`+n+`"`)) {
				t.Fatalf("bundled_%s.cpp missing or wrong: run go generate", base)
			}
		}
	}
	wrappers, _ := filepath.Glob("bundled_*.cpp")
	if len(wrappers) != len(lib)-countHpp(lib) {
		t.Fatalf("%d bundled_*.cpp for %d sources: run go generate", len(wrappers), len(lib)-countHpp(lib))
	}
}

func countHpp(files []string) int {
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".hpp") {
			n++
		}
	}
	return n
}
