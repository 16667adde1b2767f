package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// sizeValue is a flag of a number of bytes that accepts units, as the
// flag table shows them: 32MiB, 512KiB, 1GB, or plain bytes.
type sizeValue struct{ p *int }

type sizeUnit struct {
	suffix string
	factor int
}

// sizeUnits are the units Set accepts, each suffix tried before those it
// ends with.
var sizeUnits = []sizeUnit{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

func (v sizeValue) Set(s string) error {
	t := strings.ToLower(strings.TrimSpace(s))
	factor := 1
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			t, factor = strings.TrimSpace(num), u.factor
			break
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 || n > int(^uint(0)>>1)/factor {
		return fmt.Errorf("%q is not a size: write bytes, or a number with a unit such as 32MiB, 512KiB or 1GB", s)
	}
	*v.p = n * factor
	return nil
}

func (v sizeValue) String() string {
	n := *v.p
	for _, u := range []sizeUnit{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.factor == 0 {
			return strconv.Itoa(n/u.factor) + u.suffix
		}
	}
	return strconv.Itoa(n)
}

func (sizeValue) Type() string { return "size" }

// boolValue is a boolean flag that also takes what people type in an
// environment variable: yes/no, on/off, 1/0.
type boolValue struct{ p *bool }

func (v boolValue) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "t", "yes", "y", "on", "1":
		*v.p = true
	case "false", "f", "no", "n", "off", "0":
		*v.p = false
	default:
		return fmt.Errorf("%q is not a boolean: use true or false (yes/no, on/off and 1/0 work too)", s)
	}
	return nil
}

func (v boolValue) String() string { return strconv.FormatBool(*v.p) }
func (boolValue) Type() string     { return "bool" }
func (boolValue) IsBoolFlag() bool { return true }

// countValue is a whole-number flag with a message people can act on.
type countValue struct{ p *int }

func (v countValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*v.p = n
	return nil
}

func (v countValue) String() string { return strconv.Itoa(*v.p) }
func (countValue) Type() string     { return "int" }

// durationValue is a duration flag with a message people can act on.
type durationValue struct{ p *time.Duration }

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a duration: write a number with a unit, such as 50s, 2m or 1m30s", s)
	}
	*v.p = d
	return nil
}

func (v durationValue) String() string { return v.p.String() }
func (durationValue) Type() string     { return "duration" }

// sizeVar, boolVar, countVar and durationVar register the four kinds of
// flag on fs, set to value.
func sizeVar(fs *pflag.FlagSet, p *int, name string, value int, usage string) {
	*p = value
	fs.Var(sizeValue{p}, name, usage)
}

func boolVar(fs *pflag.FlagSet, p *bool, name string, value bool, usage string) {
	*p = value
	fs.Var(boolValue{p}, name, usage)
	fs.Lookup(name).NoOptDefVal = "true" // --name alone means true
}

func countVar(fs *pflag.FlagSet, p *int, name string, value int, usage string) {
	*p = value
	fs.Var(countValue{p}, name, usage)
}

func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(durationValue{p}, name, usage)
}
