//go:build ignore

// A Go program that asks a question and waits for the answer: fmt.Scanln
// reads stdin in one runtime thread while the others park (input_wait_test).
// tests/meson.build builds it by file name; the constraint above keeps it
// out of the repository's Go module (go.mod at the root), whose one package
// is shims/go.
package main

import "fmt"

func main() {
	var answer string
	fmt.Print("name? ")
	fmt.Scanln(&answer)
	fmt.Println("hello", answer)
}
