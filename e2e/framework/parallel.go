package framework

import (
	"flag"
	"fmt"
	"strconv"
)

// SetDefaultParallel sets -test.parallel to n unless the command line set it. Suites whose parallel tests mostly
// wait on controllers call it in TestMain, after flag.Parse and before RunSuite: the default, GOMAXPROCS, is 2 on
// CI machines.
func SetDefaultParallel(n int) error {
	return setDefaultFlag(flag.CommandLine, "test.parallel", strconv.Itoa(n))
}

// setDefaultFlag sets the named flag of fs to value unless it was set on the command line.
func setDefaultFlag(fs *flag.FlagSet, name, value string) error {
	f := fs.Lookup(name)
	if f == nil {
		return fmt.Errorf("no -%s flag: call this from TestMain, after flag.Parse", name)
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	if set {
		return nil
	}
	if err := fs.Set(name, value); err != nil {
		return fmt.Errorf("can't set -%s: %w", name, err)
	}
	return nil
}
