package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// composeVariant is one way to run the system with docker compose: the files given with -f, in order, and the servers
// the apps other than the gateway wait for (depends_on: service_healthy).
type composeVariant struct {
	files []string
	// postgres: every app's shared state on PostgreSQL (EVENTSTORE_URL, READMODEL_URL); neither MongoDB nor KurrentDB
	// started.
	postgres bool
}

var composeVariants = []composeVariant{
	{files: []string{"docker-compose.yml"}},
	{files: []string{"docker-compose.yml", "docker-compose.postgres.yml"}, postgres: true},
}

// infraHealthy are the servers an app (not the gateway) waits for (depends_on: service_healthy).
func (v composeVariant) infraHealthy(app string) []string {
	if !v.postgres {
		return []string{"kurrentdb", "mongo", "kafka"}
	}
	return []string{"postgres", "kafka"}
}

func checkCompose(r *Report, root string) {
	for i, v := range composeVariants {
		checkComposeVariant(r, root, v, i == 0)
	}
}

// checkComposeVariant: `first` also checks what the variants share (the Dockerfile, the telemetry services' files).
func checkComposeVariant(r *Report, root string, variant composeVariant, first bool) {
	r.start("compose", strings.Join(variant.files, " + ")+": compose-spec schema (compose-go loader), then the platform's rules")
	var paths []string
	for _, f := range variant.files {
		paths = append(paths, filepath.Join(root, f))
	}
	// No OS environment and no .env file: the file must be valid with its own defaults, as on a fresh clone.
	opts, err := cli.NewProjectOptions(paths,
		cli.WithWorkingDirectory(root),
		cli.WithEnv([]string{}),
		cli.WithInterpolation(true),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		r.fail("compose options: %v", err)
		return
	}
	project, err := opts.LoadProject(context.Background())
	if !r.noteCheck(err == nil, "loads and matches the compose specification%s", errSuffix(err)) {
		return
	}
	names := project.ServiceNames()
	sort.Strings(names)
	r.note("services: %s", strings.Join(names, ", "))

	// Images pinned: every image that is pulled, and the Dockerfile's base images.
	for _, name := range names {
		svc := project.Services[name]
		if svc.Build != nil {
			continue
		}
		r.check(imagePinned(svc.Image), "%s: image %q pinned to a version", name, svc.Image)
	}
	if first {
		checkDockerfile(r, root)
	}
	if variant.postgres {
		_, kurrent := project.Services["kurrentdb"]
		r.check(!kurrent, "KurrentDB is not started (PostgreSQL holds the events)")
		_, mongo := project.Services["mongo"]
		r.check(!mongo, "MongoDB is not started (PostgreSQL holds the read models and the apps' shared state)")
	}

	// Health checks of the servers the apps wait for, and depends_on targets.
	for _, name := range names {
		svc := project.Services[name]
		for dep, cond := range svc.DependsOn {
			target, exists := project.Services[dep]
			if !r.check(exists, "%s: depends_on %s exists", name, dep) {
				continue
			}
			if cond.Condition == types.ServiceConditionHealthy {
				hasCheck := target.HealthCheck != nil && !target.HealthCheck.Disable && len(target.HealthCheck.Test) > 0
				_, isApp := knownApp(dep)
				r.check(hasCheck || isApp, "%s: depends_on %s (service_healthy) has a health check%s", name, dep,
					map[bool]string{true: " (the image's HEALTHCHECK)", false: ""}[isApp && !hasCheck])
			}
		}
	}

	secrets := map[string]string{}
	for _, app := range Apps {
		svc, ok := project.Services[app.Name]
		if !r.check(ok, "app %s is a service", app.Name) {
			continue
		}
		checkComposeApp(r, project, root, variant, app, svc, secrets)
	}
	// One INTERNAL_AUTH_SECRET for all.
	distinct := map[string]bool{}
	for _, v := range secrets {
		distinct[v] = true
	}
	r.check(len(distinct) == 1, "INTERNAL_AUTH_SECRET is the same for the gateway and every service (%d distinct values)", len(distinct))

	// Only the gateway is published; telemetry UIs (Jaeger, Prometheus, Grafana) only on loopback.
	for _, name := range names {
		for _, p := range project.Services[name].Ports {
			uiPort, isUI := telemetryUIs[name]
			switch {
			case name == "gateway":
				r.check(p.Target == 8080, "gateway publishes container port 8080 (host %s)", p.Published)
			case isUI && p.Target == uiPort && (p.HostIP == "127.0.0.1" || p.HostIP == "::1"):
				r.ok("%s publishes its UI %d on loopback only", name, p.Target)
			default:
				r.fail("%s publishes port %d on %q: only the gateway (and the Jaeger, Prometheus and Grafana UIs on loopback) may be published", name, p.Target, p.HostIP)
			}
		}
	}
	for name, port := range telemetryUIs {
		published := false
		for _, p := range project.Services[name].Ports {
			published = published || p.Target == port
		}
		r.check(published, "%s UI (%d) published on loopback", name, port)
	}

	// Bind-mounted files exist (the collector configuration).
	for _, name := range names {
		for _, v := range project.Services[name].Volumes {
			if v.Type == types.VolumeTypeBind {
				_, err := os.Stat(v.Source)
				r.check(err == nil, "%s: bind mount %s exists", name, rel(root, v.Source))
			}
		}
	}

	if first {
		checkComposeObservability(r, root, project)
	}

	// Every app in the repository is deployed (warning only: an app being written may not be ready yet).
	for _, a := range appsInRepo(root) {
		if _, ok := project.Services[a]; !ok {
			r.warn("apps/%s has no service in docker-compose.yml", a)
		}
	}
}

func checkComposeApp(r *Report, project *types.Project, root string, variant composeVariant, app App, svc types.ServiceConfig, secrets map[string]string) {
	n := app.Name
	if r.check(svc.Build != nil, "%s: built from the repository", n) {
		absRoot, _ := filepath.Abs(root)
		r.check(filepath.Clean(svc.Build.Context) == absRoot, "%s: build context is the repository root (%s)", n, svc.Build.Context)
		r.check(filepath.Base(svc.Build.Dockerfile) == "Dockerfile", "%s: built with the one Dockerfile", n)
		arg := svc.Build.Args["APP"]
		r.check(arg != nil && *arg == n, "%s: build arg APP=%s", n, n)
	}
	env := map[string]string{}
	for k, v := range svc.Environment {
		if v != nil {
			env[k] = *v
		}
	}
	servers := []string{"EVENTSTORE_URL", "MONGO_URL", "OTEL_EXPORTER_OTLP_ENDPOINT"}
	required := ServiceEnv
	if variant.postgres {
		// Every app's read models and shared state on READMODEL_URL, none on MongoDB.
		required, servers = []string{"READMODEL_URL"}, []string{"EVENTSTORE_URL", "READMODEL_URL", "OTEL_EXPORTER_OTLP_ENDPOINT"}
		for _, k := range ServiceEnv {
			if k != "MONGO_URL" {
				required = append(required, k)
			}
		}
		for _, k := range []string{"EVENTSTORE_URL", "READMODEL_URL"} {
			r.check(strings.HasPrefix(env[k], "postgres://") || strings.HasPrefix(env[k], "postgresql://"), "%s: %s is a postgres:// URL", n, k)
		}
		r.check(env["MONGO_URL"] == "", "%s: MONGO_URL unset (its state is on READMODEL_URL)", n)
	}
	for _, k := range required {
		r.check(env[k] != "", "%s: %s set", n, k)
	}
	r.check(env["PORT"] == fmt.Sprint(app.Port), "%s: PORT=%d", n, app.Port)
	r.check(len(env["INTERNAL_AUTH_SECRET"]) >= 32, "%s: INTERNAL_AUTH_SECRET has at least 32 characters", n)
	secrets[n] = env["INTERNAL_AUTH_SECRET"]

	// Server addresses point at services of this file.
	for _, k := range servers {
		host, _, ok := hostPort(env[k])
		_, exists := project.Services[host]
		r.check(ok && exists, "%s: %s host %q is a compose service", n, k, host)
	}
	for _, b := range strings.Split(env["KAFKA_BROKERS"], ",") {
		host, port, ok := hostPort(strings.TrimSpace(b))
		_, exists := project.Services[host]
		r.check(ok && exists && port > 0, "%s: KAFKA_BROKERS entry %q is host:port of a compose service", n, b)
	}

	if n != "gateway" {
		for _, infra := range variant.infraHealthy(n) {
			dep, ok := svc.DependsOn[infra]
			r.check(ok && dep.Condition == types.ServiceConditionHealthy, "%s: waits for %s to be healthy", n, infra)
		}
		return
	}
	// Gateway: a URL for every service (those listed here and those its config declares), auth configured.
	vars := map[string]bool{}
	for _, a := range Apps[1:] {
		vars[svcURLVar(a.Name)] = true
	}
	for _, v := range gatewayServiceURLVars(root) {
		vars[v] = true
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		host, port, ok := hostPort(env[k])
		target, known := knownAppByURLVar(k)
		if !r.check(ok && host != "", "gateway: %s set (%s)", k, env[k]) {
			continue
		}
		if known {
			r.check(host == target.Name && port == target.Port, "gateway: %s points at %s:%d", k, target.Name, target.Port)
			dep, ok := svc.DependsOn[target.Name]
			r.check(ok && dep.Condition == types.ServiceConditionHealthy, "gateway: waits for %s to be healthy", target.Name)
		} else {
			_, exists := project.Services[host]
			r.check(exists, "gateway: %s host %q is a compose service", k, host)
		}
	}
	r.check(len(env["AUTH_JWT_SECRET"]) >= 32 || env["AUTH_JWKS_URL"] != "",
		"gateway: Bearer JWTs verifiable (AUTH_JWT_SECRET >= 32 characters or AUTH_JWKS_URL)")
}

func knownAppByURLVar(v string) (App, bool) {
	for _, a := range Apps {
		if svcURLVar(a.Name) == v {
			return a, true
		}
	}
	return App{}, false
}

var argLine = regexp.MustCompile(`(?im)^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)=(\S+)`)

// checkDockerfile: base images pinned, APP selects the bundle, non-root, health check, source maps.
func checkDockerfile(r *Report, root string) {
	src, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if !r.check(err == nil, "Dockerfile readable%s", errSuffix(err)) {
		return
	}
	text := string(src)
	args := map[string]string{}
	for _, m := range argLine.FindAllStringSubmatch(text, -1) {
		args[m[1]] = m[2]
	}
	stages, seen := map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.EqualFold(f[0], "FROM") {
			continue
		}
		f = f[1:]
		if strings.HasPrefix(f[0], "--platform=") {
			f = f[1:]
		}
		ref := f[0]
		if !stages[ref] { // not FROM an earlier stage
			if strings.HasPrefix(ref, "$") {
				ref = args[strings.Trim(ref, "${}")]
			}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			r.noteCheck(imagePinned(ref), "Dockerfile: base image %q pinned to a version", ref)
		}
		if len(f) >= 3 && strings.EqualFold(f[1], "AS") {
			stages[f[2]] = true
		}
	}
	for _, need := range []struct{ re, what string }{
		{`(?m)^\s*ARG\s+APP\b`, "ARG APP"},
		{`(?m)^\s*ENV\s+(?:[^\n]*\\\n)*[^\n]*\bAPP=\$\{?APP\}?`, "ENV APP from the build argument"},
		{`dist/apps/\$\{?APP\}?/main\.js`, "runs dist/apps/$APP/main.js"},
		{`--enable-source-maps`, "node --enable-source-maps"},
		{`(?m)^\s*USER\s+(node|[1-9][0-9]*)\b`, "runs as a non-root user"},
		{`(?m)^\s*HEALTHCHECK\b`, "HEALTHCHECK"},
		{`npm ci\b`, "npm ci (lock file)"},
		{`npm prune --omit=dev|npm ci[^\n]*--omit=dev`, "production node_modules only"},
	} {
		r.check(regexp.MustCompile(need.re).MatchString(text), "Dockerfile: %s", need.what)
	}
	hc, err := os.ReadFile(filepath.Join(root, "deploy", "docker", "healthcheck.cjs"))
	r.check(err == nil && strings.Contains(string(hc), "/readyz"), "deploy/docker/healthcheck.cjs probes /readyz")
	if err == nil {
		for _, a := range Apps {
			r.check(strings.Contains(string(hc), fmt.Sprintf("%d", a.Port)), "healthcheck.cjs knows %s's default port %d", a.Name, a.Port)
		}
	}
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}
