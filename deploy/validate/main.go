// Command validate checks the deployment files of the repository offline: the compose file against the
// compose specification (compose-go, the loader of `docker compose`), the Kubernetes manifests by building
// their kustomizations (kustomize's krusty) and decoding every object strictly into the typed k8s.io/api
// structs (unknown or misspelled fields fail), the collector configuration, and cross-references between
// them and the apps (every app deployed, every required variable set, ports, selectors, secrets, images).
//
//	validate -root <repo> [compose] [k8s] [otel]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// App is one deployable process of the platform.
type App struct {
	Name string
	Port int
}

// Apps lists every app of the distributed deployment with its default port.
var Apps = []App{
	{"gateway", 8080},
	{"history-svc", 8081},
	{"playlist-svc", 8082},
	{"preference-svc", 8083},
	{"profile-svc", 8084},
	{"catalogue-svc", 8085},
	{"export-worker", 8086},
}

// ServiceEnv are the variables every app needs in the distributed mode (libs/config commonConfigSchema).
var ServiceEnv = []string{"PORT", "HOST", "DATA_DIR", "LOG_LEVEL", "EVENTSTORE_URL", "MONGO_URL", "MONGO_DB_PREFIX",
	"KAFKA_BROKERS", "OTEL_EXPORTER_OTLP_ENDPOINT", "INTERNAL_AUTH_SECRET"}

// Report collects what was checked and what failed.
type Report struct {
	verbose  bool
	section  string
	passed   int
	checks   int
	problems []string
	warnings []string
}

func (r *Report) ok(format string, args ...any) {
	r.checks++
	r.passed++
	if r.verbose {
		fmt.Printf("  ok    %s\n", fmt.Sprintf(format, args...))
	}
}

// note is a check that passed and is always printed: what was loaded, parsed or built.
func (r *Report) note(format string, args ...any) {
	r.checks++
	r.passed++
	fmt.Printf("  ok    %s\n", fmt.Sprintf(format, args...))
}

// noteCheck is check, printed even when quiet.
func (r *Report) noteCheck(cond bool, format string, args ...any) bool {
	if cond {
		r.note(format, args...)
	} else {
		r.fail(format, args...)
	}
	return cond
}

func (r *Report) fail(format string, args ...any) {
	r.checks++
	msg := fmt.Sprintf(format, args...)
	r.problems = append(r.problems, fmt.Sprintf("[%s] %s", r.section, msg))
	fmt.Printf("  FAIL  %s\n", msg)
}

func (r *Report) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.warnings = append(r.warnings, fmt.Sprintf("[%s] %s", r.section, msg))
	fmt.Printf("  warn  %s\n", msg)
}

// check records ok when cond holds, else the failure message.
func (r *Report) check(cond bool, format string, args ...any) bool {
	if cond {
		r.ok(format, args...)
	} else {
		r.fail(format, args...)
	}
	return cond
}

func (r *Report) start(section, title string) {
	r.finish()
	r.section = section
	fmt.Printf("\n== %s\n", title)
}

// finish prints how many checks of the current part passed.
func (r *Report) finish() {
	if r.section != "" && !r.verbose {
		fmt.Printf("  ..    %d checks passed\n", r.passed)
	}
	r.passed = 0
}

func main() {
	root := flag.String("root", ".", "repository root")
	verbose := flag.Bool("v", false, "print every check, not only failures and summaries")
	flag.Parse()
	if abs, err := filepath.Abs(*root); err == nil {
		*root = abs
	}
	sections := flag.Args()
	if len(sections) == 0 {
		sections = []string{"compose", "k8s", "otel"}
	}
	r := &Report{verbose: *verbose}
	for _, s := range sections {
		switch s {
		case "compose":
			checkCompose(r, *root)
		case "k8s":
			checkK8s(r, *root)
		case "otel":
			checkOtel(r, *root)
		default:
			fmt.Fprintf(os.Stderr, "unknown section %q (compose, k8s, otel)\n", s)
			os.Exit(2)
		}
	}
	r.finish()
	fmt.Printf("\n%d checks, %d problems, %d warnings\n", r.checks, len(r.problems), len(r.warnings))
	for _, w := range r.warnings {
		fmt.Printf("  warning: %s\n", w)
	}
	if len(r.problems) > 0 {
		sort.Strings(r.problems)
		fmt.Printf("\nPROBLEMS:\n  %s\n", strings.Join(r.problems, "\n  "))
		os.Exit(1)
	}
}
