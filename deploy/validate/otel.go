package main

import (
	"os"
	"path/filepath"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"
)

// collectorConfig is the part of the OpenTelemetry collector configuration that wires components together.
type collectorConfig struct {
	Extensions map[string]any `json:"extensions"`
	Receivers  map[string]any `json:"receivers"`
	Processors map[string]any `json:"processors"`
	Connectors map[string]any `json:"connectors"`
	Exporters  map[string]any `json:"exporters"`
	Service    struct {
		Extensions []string `json:"extensions"`
		Pipelines  map[string]struct {
			Receivers  []string `json:"receivers"`
			Processors []string `json:"processors"`
			Exporters  []string `json:"exporters"`
		} `json:"pipelines"`
		Telemetry map[string]any `json:"telemetry"`
	} `json:"service"`
}

// checkOtel: the collector's pipelines only name declared components, connectors join two pipelines,
// OTLP/http is received on 4318 (the apps' endpoint), traces reach Jaeger.
func checkOtel(r *Report, root string) {
	r.start("otel", "deploy/otel-collector.yaml: structure and pipeline wiring")
	data, err := os.ReadFile(filepath.Join(root, "deploy", "otel-collector.yaml"))
	if !r.check(err == nil, "readable%s", errSuffix(err)) {
		return
	}
	var c collectorConfig
	err = sigsyaml.UnmarshalStrict(data, &c)
	if !r.noteCheck(err == nil, "parses, only known top-level sections%s", errSuffix(err)) {
		return
	}
	for _, e := range c.Service.Extensions {
		_, ok := c.Extensions[e]
		r.check(ok, "service extension %s declared", e)
	}
	usedAsExporter, usedAsReceiver := map[string]bool{}, map[string]bool{}
	for name, p := range c.Service.Pipelines {
		signal := strings.SplitN(name, "/", 2)[0]
		r.check(signal == "traces" || signal == "metrics" || signal == "logs", "pipeline %s has a known signal", name)
		r.check(len(p.Receivers) > 0 && len(p.Exporters) > 0, "pipeline %s has receivers and exporters", name)
		for _, id := range p.Receivers {
			_, rec := c.Receivers[id]
			_, con := c.Connectors[id]
			r.check(rec || con, "pipeline %s: receiver %s declared", name, id)
			usedAsReceiver[id] = usedAsReceiver[id] || con
		}
		for _, id := range p.Processors {
			_, ok := c.Processors[id]
			r.check(ok, "pipeline %s: processor %s declared", name, id)
		}
		for _, id := range p.Exporters {
			_, exp := c.Exporters[id]
			_, con := c.Connectors[id]
			r.check(exp || con, "pipeline %s: exporter %s declared", name, id)
			usedAsExporter[id] = usedAsExporter[id] || con
		}
	}
	for id := range c.Connectors {
		r.check(usedAsExporter[id] && usedAsReceiver[id], "connector %s is an exporter of one pipeline and a receiver of another", id)
	}
	otlp, _ := c.Receivers["otlp"].(map[string]any)
	protocols, _ := otlp["protocols"].(map[string]any)
	httpProto, _ := protocols["http"].(map[string]any)
	endpoint, _ := httpProto["endpoint"].(string)
	r.check(strings.HasSuffix(endpoint, ":4318"), "OTLP/http received on :4318 (%s)", endpoint)
	_, hasGrpc := protocols["grpc"]
	r.check(hasGrpc, "OTLP/gRPC received too")
	traces := c.Service.Pipelines["traces"]
	toJaeger := false
	for _, id := range traces.Exporters {
		if exp, ok := c.Exporters[id].(map[string]any); ok && strings.HasPrefix(id, "otlp") {
			ep, _ := exp["endpoint"].(string)
			toJaeger = toJaeger || strings.HasPrefix(ep, "jaeger:")
		}
	}
	r.check(toJaeger, "traces pipeline exports OTLP to jaeger")
}
