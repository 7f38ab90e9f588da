package main

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// pinnedImage: a tag that names a version (digits), not latest or a floating major.
var versionTag = regexp.MustCompile(`^v?[0-9]+\.[0-9]+(\.[0-9]+)?([-.][A-Za-z0-9.-]+)?$`)

// imagePinned tells whether ref carries a digest or a version tag such as 7.0.14, v3.13.2 or 20.20.2-bookworm-slim.
func imagePinned(ref string) bool {
	if strings.Contains(ref, "@sha256:") {
		return true
	}
	name := ref
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	i := strings.LastIndex(name, ":")
	if i < 0 {
		return false
	}
	return versionTag.MatchString(name[i+1:])
}

// hostPort parses a URL-ish address (scheme://host:port/..., or host:port) into host and port.
func hostPort(address string) (string, int, bool) {
	if strings.Contains(address, "://") {
		u, err := url.Parse(address)
		if err != nil || u.Host == "" {
			return "", 0, false
		}
		p, _ := strconv.Atoi(u.Port())
		return u.Hostname(), p, true
	}
	h, p, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, false
	}
	n, _ := strconv.Atoi(p)
	return h, n, true
}

// appsInRepo lists apps/<name>/src/main.ts present in the repository.
func appsInRepo(root string) []string {
	matches, _ := filepath.Glob(filepath.Join(root, "apps", "*", "src", "main.ts"))
	var names []string
	for _, m := range matches {
		names = append(names, filepath.Base(filepath.Dir(filepath.Dir(m))))
	}
	return names
}

// gatewayServiceURLVars reads the *_SVC_URL variables that the gateway's configuration declares.
func gatewayServiceURLVars(root string) []string {
	src, err := os.ReadFile(filepath.Join(root, "apps", "gateway", "src", "config.ts"))
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var vars []string
	for _, m := range regexp.MustCompile(`\b([A-Z][A-Z0-9_]*_SVC_URL)\b`).FindAllStringSubmatch(string(src), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			vars = append(vars, m[1])
		}
	}
	return vars
}

// svcURLVar is the gateway variable that addresses an app: history-svc -> HISTORY_SVC_URL.
func svcURLVar(app string) string {
	return strings.ToUpper(strings.ReplaceAll(app, "-", "_")) + "_URL"
}

func knownApp(name string) (App, bool) {
	for _, a := range Apps {
		if a.Name == name {
			return a, true
		}
	}
	return App{}, false
}
