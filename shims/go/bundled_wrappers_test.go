package sup_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// -tags sup_bundled compiles libsup through one bundled_NAME.cpp per source
// in this directory, each including ../../lib/NAME.cpp: a lib/*.cpp without
// its wrapper would be missing from the bundled library (an undefined symbol
// at link time, or a feature quietly absent), and a wrapper without its
// source breaks the build. The library's own list is sup_sources in
// lib/meson.build.
func TestBundledWrappers(t *testing.T) {
	const regen = "run sh shims/go/gen_bundled.sh"
	lib, _ := filepath.Glob("../../lib/*.cpp")
	if len(lib) == 0 {
		t.Skip("not inside the sup checkout")
	}
	sources := map[string]bool{}
	for _, f := range lib {
		sources[strings.TrimSuffix(filepath.Base(f), ".cpp")] = true
	}
	meson, err := os.ReadFile("../../lib/meson.build")
	if err != nil {
		t.Fatal(err)
	}
	list := regexp.MustCompile(`(?s)sup_sources = files\((.*?)\)`).FindSubmatch(meson)
	if list == nil {
		t.Fatal("lib/meson.build: no sup_sources = files(...) list")
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`'([^']+)\.cpp'`).FindAllSubmatch(list[1], -1) {
		listed[string(m[1])] = true
	}
	for _, n := range sortedNames(listed) {
		if !sources[n] {
			t.Errorf("lib/meson.build lists %s.cpp, which lib/ does not hold", n)
		}
	}
	for _, n := range sortedNames(sources) {
		if !listed[n] {
			t.Errorf("lib/%s.cpp is not in sup_sources of lib/meson.build", n)
		}
	}

	wrappers, _ := filepath.Glob("bundled_*.cpp")
	have := map[string]bool{}
	for _, w := range wrappers {
		n := strings.TrimSuffix(strings.TrimPrefix(w, "bundled_"), ".cpp")
		have[n] = true
		if !sources[n] {
			t.Errorf("%s includes lib/%s.cpp, which lib/ does not hold: %s", w, n, regen)
			continue
		}
		text, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(text), "//go:build sup_bundled\n") ||
			!strings.Contains(string(text), "\n#include \"../../lib/"+n+".cpp\"\n") {
			t.Errorf("%s is not sup_bundled's wrapper of lib/%s.cpp: %s", w, n, regen)
		}
	}
	for _, n := range sortedNames(sources) {
		if !have[n] {
			t.Errorf("lib/%s.cpp has no bundled_%s.cpp, so -tags sup_bundled leaves it out: %s", n, n, regen)
		}
	}
}

func sortedNames(set map[string]bool) []string {
	var s []string
	for k := range set {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}
