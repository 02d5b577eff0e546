// Package parallel raises a test binary's -parallel for packages whose
// tests mostly wait on real processes (engine CLIs, whole flows, write
// gaps): at the default (GOMAXPROCS, 2 on the development machine) two
// waiting tests hold every slot while the CPU idles.
package parallel

import (
	"flag"
	"runtime"
	"strconv"
)

// AtLeast sets -test.parallel to n unless the command line gave it or
// GOMAXPROCS is already n or more. Call it from TestMain after flag.Parse.
func AtLeast(n int) { atLeast(flag.CommandLine, n, runtime.GOMAXPROCS(0)) }

func atLeast(fs *flag.FlagSet, n, procs int) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && procs < n {
		_ = fs.Set("test.parallel", strconv.Itoa(n))
	}
}
