// Command child is the process the tests of proctest start. It follows its arguments in
// order: out:TEXT and err:TEXT print a line to stdout or stderr, sleep:DURATION sleeps,
// spin:DURATION works until the process has used DURATION of CPU, term:CODE exits with CODE on SIGTERM, ignoreterm ignores SIGTERM, and exit:CODE exits.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	for _, arg := range os.Args[1:] {
		verb, val, _ := strings.Cut(arg, ":")
		switch verb {
		case "out":
			fmt.Println(val)
		case "err":
			fmt.Fprintln(os.Stderr, val)
		case "sleep":
			d, _ := time.ParseDuration(val)
			time.Sleep(d)
		case "spin":
			d, _ := time.ParseDuration(val)
			for cpu() < d {
			}
		case "term":
			code, _ := strconv.Atoi(val)
			c := make(chan os.Signal, 1)
			signal.Notify(c, syscall.SIGTERM)
			go func() { <-c; os.Exit(code) }()
		case "ignoreterm":
			signal.Ignore(syscall.SIGTERM)
		case "exit":
			code, _ := strconv.Atoi(val)
			os.Exit(code)
		}
	}
}

// cpu is the CPU time the process has used.
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
