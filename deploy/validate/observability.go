package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
	sigsyaml "sigs.k8s.io/yaml"
)

// telemetryUIs are the services whose UI the compose file publishes, on loopback only, with their container port.
var telemetryUIs = map[string]uint32{"jaeger": 16686, "prometheus": 9090, "grafana": 3000}

// checkComposeObservability: Prometheus scrapes the collector's prometheus exporter at the port the collector
// configuration declares; Grafana's provisioned data sources point at compose services; its dashboard provider
// reads the mounted dashboards of deploy/grafana/dashboards, which parse and query a provisioned data source.
func checkComposeObservability(r *Report, root string, project *types.Project) {
	prom, ok := project.Services["prometheus"]
	if !r.check(ok, "prometheus is a service") {
		return
	}
	config := mountedFile(root, prom, "deploy/prometheus/prometheus.yml")
	if !r.check(config != "", "prometheus mounts deploy/prometheus/prometheus.yml") {
		return
	}
	var promConfig struct {
		ScrapeConfigs []struct {
			JobName       string `json:"job_name"`
			HonorLabels   bool   `json:"honor_labels"`
			StaticConfigs []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
		} `json:"scrape_configs"`
	}
	data, err := os.ReadFile(filepath.Join(root, "deploy", "prometheus", "prometheus.yml"))
	if err == nil {
		err = sigsyaml.Unmarshal(data, &promConfig)
	}
	if !r.check(err == nil, "deploy/prometheus/prometheus.yml parses%s", errSuffix(err)) {
		return
	}
	exporterPort := collectorPrometheusPort(root)
	scraped := false
	for _, sc := range promConfig.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, t := range st.Targets {
				host, port, ok := hostPort(t)
				if ok && host == "otel-collector" && port == exporterPort {
					scraped = true
					// The collector sets job/instance from each app's resource; without honor_labels they become exported_*.
					r.check(sc.HonorLabels, "prometheus job %s keeps the collector's job and instance labels (honor_labels)", sc.JobName)
				}
			}
		}
	}
	r.check(exporterPort > 0 && scraped, "prometheus scrapes otel-collector:%d, the collector's prometheus exporter", exporterPort)

	graf, ok := project.Services["grafana"]
	if !r.check(ok, "grafana is a service") {
		return
	}
	provisioning := mountedFile(root, graf, "deploy/grafana/provisioning")
	dashboardsDir := mountedFile(root, graf, "deploy/grafana/dashboards")
	r.check(provisioning == "/etc/grafana/provisioning", "grafana mounts deploy/grafana/provisioning at /etc/grafana/provisioning (%q)", provisioning)
	if !r.check(dashboardsDir != "", "grafana mounts deploy/grafana/dashboards") {
		return
	}
	uids := map[string]bool{}
	sources, _ := filepath.Glob(filepath.Join(root, "deploy", "grafana", "provisioning", "datasources", "*.y*ml"))
	r.check(len(sources) > 0, "grafana data sources provisioned")
	for _, f := range sources {
		var ds struct {
			Datasources []struct {
				UID  string `json:"uid"`
				Type string `json:"type"`
				URL  string `json:"url"`
			} `json:"datasources"`
		}
		data, err := os.ReadFile(f)
		if err == nil {
			err = sigsyaml.Unmarshal(data, &ds)
		}
		if !r.check(err == nil, "%s parses%s", rel(root, f), errSuffix(err)) {
			continue
		}
		for _, d := range ds.Datasources {
			host, port, ok := hostPort(d.URL)
			_, exists := project.Services[host]
			r.check(ok && exists && port > 0, "grafana data source %s (%s) points at a compose service (%s)", d.UID, d.Type, d.URL)
			uids[d.UID] = true
		}
	}
	providers, _ := filepath.Glob(filepath.Join(root, "deploy", "grafana", "provisioning", "dashboards", "*.y*ml"))
	for _, f := range providers {
		var p struct {
			Providers []struct {
				Options struct {
					Path string `json:"path"`
				} `json:"options"`
			} `json:"providers"`
		}
		data, err := os.ReadFile(f)
		if err == nil {
			err = sigsyaml.Unmarshal(data, &p)
		}
		if !r.check(err == nil && len(p.Providers) > 0, "%s parses%s", rel(root, f), errSuffix(err)) {
			continue
		}
		for _, pr := range p.Providers {
			r.check(pr.Options.Path == dashboardsDir, "dashboard provider reads %s, where deploy/grafana/dashboards is mounted", pr.Options.Path)
		}
	}
	dashboards, _ := filepath.Glob(filepath.Join(root, "deploy", "grafana", "dashboards", "*.json"))
	r.check(len(dashboards) > 0, "grafana dashboards in deploy/grafana/dashboards")
	for _, f := range dashboards {
		checkDashboard(r, root, f, uids)
	}
}

// checkDashboard: valid JSON with a uid, distinct panel ids, every data source one of the provisioned ones.
// (Metric names are checked against the apps' catalogue by libs/telemetry/src/dashboard.unit.spec.ts.)
func checkDashboard(r *Report, root, file string, uids map[string]bool) {
	data, err := os.ReadFile(file)
	var d map[string]any
	if err == nil {
		err = json.Unmarshal(data, &d)
	}
	name := rel(root, file)
	if !r.check(err == nil, "%s parses%s", name, errSuffix(err)) {
		return
	}
	uid, _ := d["uid"].(string)
	r.check(uid != "", "%s has a uid", name)
	ids := map[float64]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch n := v.(type) {
		case []any:
			for _, e := range n {
				walk(e)
			}
		case map[string]any:
			if ds, ok := n["datasource"].(map[string]any); ok {
				u, _ := ds["uid"].(string)
				r.check(uids[u], "%s: data source uid %q is provisioned", name, u)
			}
			for k, e := range n {
				if k == "panels" {
					for _, p := range e.([]any) {
						if pm, ok := p.(map[string]any); ok {
							id, _ := pm["id"].(float64)
							r.check(!ids[id], "%s: panel id %v is unique", name, id)
							ids[id] = true
						}
					}
				}
				walk(e)
			}
		}
	}
	walk(d)
	r.check(len(ids) > 0, "%s has panels", name)
}

// mountedFile: where the service mounts the repository path relPath (its container target), or "".
func mountedFile(root string, svc types.ServiceConfig, relPath string) string {
	want := filepath.Join(root, relPath)
	for _, v := range svc.Volumes {
		if v.Type == types.VolumeTypeBind && filepath.Clean(v.Source) == want {
			return v.Target
		}
	}
	return ""
}

// collectorPrometheusPort: the port of exporters.prometheus.endpoint in deploy/otel-collector.yaml (0 if none).
func collectorPrometheusPort(root string) int {
	data, err := os.ReadFile(filepath.Join(root, "deploy", "otel-collector.yaml"))
	if err != nil {
		return 0
	}
	var c collectorConfig
	if sigsyaml.Unmarshal(data, &c) != nil {
		return 0
	}
	exp, _ := c.Exporters["prometheus"].(map[string]any)
	endpoint, _ := exp["endpoint"].(string)
	_, port, _ := hostPort(strings.TrimSpace(endpoint))
	return port
}
