package sup_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

// Run a command with an idle timeout: it is ended when it falls silent, and
// what it wrote before is kept.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cmd := sup.Command("sh", "-c", "echo compiling; sleep 10; echo never")
	cmd.IdleTimeout = 200 * time.Millisecond // silent for 200 ms: hung
	cmd.Grace = time.Second                  // SIGTERM, then SIGKILL 1 s later
	cmd.Setenv("LC_ALL", "C")

	res, err := cmd.Run(ctx) // Start + Wait + Close
	var ee *sup.ExitError
	if errors.As(err, &ee) { // as with os/exec: anything but exit status 0
		fmt.Println(err)
		fmt.Printf("%s", ee.Stdout)
	} else if err != nil {
		fmt.Println("could not start:", err)
	} else {
		fmt.Printf("%s", res.Stdout)
	}
	// Output:
	// idle_timeout (signal: terminated)
	// compiling
}
