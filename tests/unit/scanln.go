// A Go program that asks a question and waits for the answer: fmt.Scanln
// reads stdin in one runtime thread while the others park (input_wait_test).
package main

import "fmt"

func main() {
	var answer string
	fmt.Print("name? ")
	fmt.Scanln(&answer)
	fmt.Println("hello", answer)
}
