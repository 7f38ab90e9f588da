package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	ktypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"
)

// strictDecoder decodes YAML or JSON into the typed objects of k8s.io/api and fails on unknown or duplicate fields.
func strictDecoder() runtime.Decoder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, networkingv1.AddToScheme,
		policyv1.AddToScheme, autoscalingv2.AddToScheme, batchv1.AddToScheme, rbacv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}

// objects of one kustomize build, by kind and name.
type objects struct {
	deployments  map[string]*appsv1.Deployment
	statefulsets map[string]*appsv1.StatefulSet
	services     map[string]*corev1.Service
	configMaps   map[string]*corev1.ConfigMap
	secrets      map[string]*corev1.Secret
	ingresses    map[string]*networkingv1.Ingress
	pdbs         map[string]*policyv1.PodDisruptionBudget
}

func checkK8s(r *Report, root string) {
	base := filepath.Join(root, "deploy", "k8s")
	if abs, err := filepath.Abs(base); err == nil {
		base = abs
	}
	decoder := strictDecoder()

	r.start("k8s", "deploy/k8s: every source file strictly decoded into k8s.io/api types")
	var files []string
	_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	var kustomizations []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			r.fail("%s: %v", rel(root, f), err)
			continue
		}
		if filepath.Base(f) == "kustomization.yaml" || filepath.Base(f) == "kustomization.yml" {
			var k ktypes.Kustomization
			err := sigsyaml.UnmarshalStrict(data, &k)
			r.noteCheck(err == nil, "%s: a valid Kustomization (strict)%s", rel(root, f), errSuffix(err))
			kustomizations = append(kustomizations, filepath.Dir(f))
			continue
		}
		docs, err := splitYAML(data)
		if !r.check(err == nil, "%s: YAML parses%s", rel(root, f), errSuffix(err)) {
			continue
		}
		var kinds []string
		bad := false
		for i, doc := range docs {
			obj, gvk, err := decoder.Decode(doc, nil, nil)
			if err != nil {
				r.fail("%s: document %d: %v", rel(root, f), i+1, err)
				bad = true
				continue
			}
			_ = obj
			kinds = append(kinds, gvk.Kind)
		}
		if !bad {
			r.note("%s: %d objects decode strictly (%s)", rel(root, f), len(docs), strings.Join(kinds, ", "))
		}
	}
	// Every manifest is used by a kustomization (a forgotten file is never applied).
	used := map[string]bool{}
	for _, dir := range kustomizations {
		data, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		var k ktypes.Kustomization
		if sigsyaml.Unmarshal(data, &k) == nil {
			for _, res := range k.Resources {
				used[filepath.Clean(filepath.Join(dir, res))] = true
			}
			for _, p := range k.Patches {
				if p.Path != "" {
					used[filepath.Clean(filepath.Join(dir, p.Path))] = true
				}
			}
		}
	}
	for _, f := range files {
		name := filepath.Base(f)
		if name == "kustomization.yaml" || name == "kustomization.yml" {
			continue
		}
		r.check(used[filepath.Clean(f)], "%s is listed in a kustomization", rel(root, f))
	}

	for _, dir := range kustomizations {
		r.start("k8s", fmt.Sprintf("kustomize build %s, strict decoding and cross-references", rel(root, dir)))
		objs, ok := buildKustomization(r, root, dir, decoder)
		if ok {
			checkObjects(r, root, filepath.Base(dir) == "base", objs)
		}
	}
}

func splitYAML(data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufioReader(data))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' || string(t) == "---" {
			continue
		}
		out = append(out, line)
	}
	return bytes.Join(out, []byte("\n"))
}

func buildKustomization(r *Report, root, dir string, decoder runtime.Decoder) (*objects, bool) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if !r.noteCheck(err == nil, "kustomize build %s%s", rel(root, dir), errSuffix(err)) {
		return nil, false
	}
	o := &objects{
		deployments: map[string]*appsv1.Deployment{}, statefulsets: map[string]*appsv1.StatefulSet{},
		services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{},
		ingresses: map[string]*networkingv1.Ingress{}, pdbs: map[string]*policyv1.PodDisruptionBudget{},
	}
	count, good := 0, true
	kinds := map[string]int{}
	for _, res := range resMap.Resources() {
		count++
		data, err := res.AsYAML()
		if err != nil {
			r.fail("%s %s: %v", res.GetKind(), res.GetName(), err)
			good = false
			continue
		}
		obj, gvk, err := decoder.Decode(data, nil, nil)
		if err != nil {
			r.fail("%s %s: %v", res.GetKind(), res.GetName(), err)
			good = false
			continue
		}
		kinds[gvk.Kind]++
		switch t := obj.(type) {
		case *appsv1.Deployment:
			o.deployments[t.Name] = t
		case *appsv1.StatefulSet:
			o.statefulsets[t.Name] = t
		case *corev1.Service:
			o.services[t.Name] = t
		case *corev1.ConfigMap:
			o.configMaps[t.Name] = t
		case *corev1.Secret:
			o.secrets[t.Name] = t
		case *networkingv1.Ingress:
			o.ingresses[t.Name] = t
		case *policyv1.PodDisruptionBudget:
			o.pdbs[t.Name] = t
		}
	}
	var summary []string
	for k, n := range kinds {
		summary = append(summary, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(summary)
	if good {
		r.note("%d objects decode strictly: %s", count, strings.Join(summary, ", "))
	}
	return o, good
}

// workload is the pod template of a Deployment or StatefulSet.
type workload struct {
	kind, name string
	selector   labels.Selector
	template   *corev1.PodTemplateSpec
}

func (o *objects) workloads() []workload {
	var out []workload
	for _, d := range sortedKeys(o.deployments) {
		w := o.deployments[d]
		out = append(out, workload{"Deployment", d, selectorOf(w.Spec.Selector.MatchLabels), &w.Spec.Template})
	}
	for _, s := range sortedKeys(o.statefulsets) {
		w := o.statefulsets[s]
		out = append(out, workload{"StatefulSet", s, selectorOf(w.Spec.Selector.MatchLabels), &w.Spec.Template})
	}
	return out
}

func selectorOf(m map[string]string) labels.Selector {
	if len(m) == 0 {
		return labels.Nothing()
	}
	return labels.SelectorFromSet(m)
}

func checkObjects(r *Report, root string, isBase bool, o *objects) {
	wls := o.workloads()
	for _, w := range wls {
		id := w.kind + " " + w.name
		r.check(w.selector.Matches(labels.Set(w.template.Labels)), "%s: selector matches its pod labels", id)
		checkPod(r, id, w.template, o)
	}
	// Services select pods, and their named target ports exist.
	for _, name := range sortedKeys(o.services) {
		s := o.services[name]
		var matched []workload
		for _, w := range wls {
			if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.template.Labels)) {
				matched = append(matched, w)
			}
		}
		if !r.check(len(matched) == 1, "Service %s selects exactly one workload (%d)", name, len(matched)) {
			continue
		}
		for _, p := range s.Spec.Ports {
			r.check(podHasPort(matched[0].template, p.TargetPort, p.Port), "Service %s port %d: target %s is a container port of %s", name, p.Port, p.TargetPort.String(), matched[0].name)
		}
	}
	for _, name := range sortedKeys(o.pdbs) {
		p := o.pdbs[name]
		n := 0
		for _, w := range wls {
			if p.Spec.Selector != nil && selectorOf(p.Spec.Selector.MatchLabels).Matches(labels.Set(w.template.Labels)) {
				n++
			}
		}
		r.check(n == 1, "PodDisruptionBudget %s selects one workload", name)
	}
	for _, name := range sortedKeys(o.ingresses) {
		for _, rule := range o.ingresses[name].Spec.Rules {
			if rule.HTTP == nil {
				continue
			}
			for _, path := range rule.HTTP.Paths {
				b := path.Backend.Service
				if b == nil {
					continue
				}
				s, ok := o.services[b.Name]
				portOK := ok && servicePort(s, b.Port) != nil
				r.check(portOK, "Ingress %s %s%s -> Service %s port %s%d exists", name, rule.Host, path.Path, b.Name, b.Port.Name, b.Port.Number)
				r.check(b.Name == "gateway", "Ingress %s routes to the gateway only", name)
			}
		}
	}

	// The apps: one Deployment and Service each, the configuration every one needs.
	for _, app := range Apps {
		d, ok := o.deployments[app.Name]
		if !r.check(ok, "app %s has a Deployment", app.Name) {
			continue
		}
		r.check(d.Spec.Replicas != nil && *d.Spec.Replicas == 2, "%s: replicas 2", app.Name)
		s, ok := o.services[app.Name]
		r.check(ok && servicePort(s, networkingv1.ServiceBackendPort{Number: int32(app.Port)}) != nil, "%s: Service on port %d", app.Name, app.Port)
		if len(d.Spec.Template.Spec.Containers) == 0 {
			continue
		}
		c := d.Spec.Template.Spec.Containers[0]
		r.check(podHasPort(&d.Spec.Template, intstr.FromString("http"), int32(app.Port)) && containerPortNamed(c, "http") == int32(app.Port), "%s: container port http = %d", app.Name, app.Port)
		rp := c.ReadinessProbe
		r.check(rp != nil && rp.HTTPGet != nil && rp.HTTPGet.Path == "/readyz", "%s: readiness probe GET /readyz", app.Name)
		// Liveness never checks a dependency: a store outage must not restart every pod.
		lp := c.LivenessProbe
		r.check(lp != nil && lp.HTTPGet != nil && lp.HTTPGet.Path == "/livez", "%s: liveness probe GET /livez", app.Name)
		env := effectiveEnv(d.Spec.Template.Spec.Containers[0], o)
		r.check(env["PORT"].value == fmt.Sprint(app.Port), "%s: PORT=%d", app.Name, app.Port)
		for _, k := range ServiceEnv {
			v, ok := env[k]
			r.check(ok, "%s: %s defined (from %s)", app.Name, k, v.source)
		}
		secret := env["INTERNAL_AUTH_SECRET"]
		r.check(strings.HasPrefix(secret.source, "Secret "), "%s: INTERNAL_AUTH_SECRET comes from a Secret (%s)", app.Name, secret.source)
		if isBase {
			r.ok("%s: INTERNAL_AUTH_SECRET is the template placeholder here (filled at deploy time)", app.Name)
		} else {
			r.check(len(secret.value) >= 32, "%s: INTERNAL_AUTH_SECRET has at least 32 characters", app.Name)
		}
		servers := []string{"EVENTSTORE_URL", "KAFKA_BROKERS"}
		if env["READMODEL_URL"].value != "" {
			// Read models and the apps' shared state on READMODEL_URL (PostgreSQL): MongoDB unused, its URL empty.
			servers = append(servers, "READMODEL_URL")
			r.check(env["MONGO_URL"].value == "", "%s: MONGO_URL empty (READMODEL_URL holds its state)", app.Name)
		} else {
			servers = append(servers, "MONGO_URL")
		}
		for _, k := range servers {
			r.check(env[k].value != "", "%s: %s not empty", app.Name, k)
			for _, addr := range strings.Split(env[k].value, ",") {
				host, port, ok := hostPort(strings.TrimSpace(addr))
				if !r.check(ok, "%s: %s %q is an address", app.Name, k, addr) {
					continue
				}
				if s, local := o.services[host]; local {
					r.check(servicePort(s, networkingv1.ServiceBackendPort{Number: int32(port)}) != nil, "%s: %s -> Service %s port %d exists", app.Name, k, host, port)
				}
			}
		}
		if app.Name != "gateway" {
			continue
		}
		vars := map[string]bool{}
		for _, a := range Apps[1:] {
			vars[svcURLVar(a.Name)] = true
		}
		for _, v := range gatewayServiceURLVars(root) {
			vars[v] = true
		}
		for _, k := range sortedKeys(vars) {
			host, port, ok := hostPort(env[k].value)
			s, exists := o.services[host]
			r.check(ok && exists && servicePort(s, networkingv1.ServiceBackendPort{Number: int32(port)}) != nil,
				"gateway: %s=%q is a Service and port of this deployment", k, env[k].value)
		}
		jwt, jwks := env["AUTH_JWT_SECRET"], env["AUTH_JWKS_URL"]
		r.check(jwt.source == "" || strings.HasPrefix(jwt.source, "Secret "), "gateway: AUTH_JWT_SECRET comes from a Secret (%s)", jwt.source)
		if !isBase {
			r.check(len(jwt.value) >= 32 || jwks.value != "", "gateway: AUTH_JWT_SECRET >= 32 characters or AUTH_JWKS_URL")
		}
	}
	for _, a := range appsInRepo(root) {
		if _, ok := o.deployments[a]; !ok {
			r.warn("apps/%s has no Deployment", a)
		}
	}
}

// checkPod: restricted Pod Security, pinned images, resources, and references to ConfigMaps, Secrets and ports.
func checkPod(r *Report, id string, t *corev1.PodTemplateSpec, o *objects) {
	ps := t.Spec.SecurityContext
	podNonRoot := ps != nil && ps.RunAsNonRoot != nil && *ps.RunAsNonRoot
	podSeccomp := ps != nil && ps.SeccompProfile != nil && ps.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
	r.check(!t.Spec.HostNetwork && !t.Spec.HostPID && !t.Spec.HostIPC, "%s: no host namespaces", id)
	for _, v := range t.Spec.Volumes {
		r.check(v.HostPath == nil, "%s: volume %s is not a hostPath", id, v.Name)
	}
	for _, c := range append(append([]corev1.Container{}, t.Spec.InitContainers...), t.Spec.Containers...) {
		cid := fmt.Sprintf("%s container %s", id, c.Name)
		r.check(imagePinned(c.Image), "%s: image %q pinned to a version", cid, c.Image)
		sc := c.SecurityContext
		nonRoot := podNonRoot || (sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot)
		numericUser := (ps != nil && ps.RunAsUser != nil && *ps.RunAsUser > 0) || (sc != nil && sc.RunAsUser != nil && *sc.RunAsUser > 0)
		r.check(nonRoot && numericUser, "%s: runAsNonRoot with a numeric non-zero runAsUser", cid)
		r.check(sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation, "%s: allowPrivilegeEscalation false", cid)
		r.check(sc != nil && sc.Capabilities != nil && len(sc.Capabilities.Drop) == 1 && sc.Capabilities.Drop[0] == "ALL" && len(sc.Capabilities.Add) == 0, "%s: drops ALL capabilities", cid)
		r.check(podSeccomp || (sc != nil && sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault), "%s: seccomp RuntimeDefault", cid)
		r.check(sc == nil || sc.Privileged == nil || !*sc.Privileged, "%s: not privileged", cid)
		_, cpu := c.Resources.Requests[corev1.ResourceCPU]
		_, mem := c.Resources.Requests[corev1.ResourceMemory]
		_, memLimit := c.Resources.Limits[corev1.ResourceMemory]
		r.check(cpu && mem && memLimit, "%s: cpu/memory requests and a memory limit", cid)
		if memLimit && mem {
			r.check(c.Resources.Limits.Memory().Cmp(*c.Resources.Requests.Memory()) >= 0, "%s: memory limit >= request", cid)
		}
		for _, probe := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
			if probe == nil {
				continue
			}
			var port *intstr.IntOrString
			if probe.HTTPGet != nil {
				port = &probe.HTTPGet.Port
			} else if probe.TCPSocket != nil {
				port = &probe.TCPSocket.Port
			}
			if port != nil {
				r.check(containerHasPort(c, *port), "%s: probe port %s is a container port", cid, port.String())
			}
		}
		for _, ef := range c.EnvFrom {
			if ef.ConfigMapRef != nil {
				_, ok := o.configMaps[ef.ConfigMapRef.Name]
				r.check(ok || optional(ef.ConfigMapRef.Optional), "%s: envFrom ConfigMap %s exists", cid, ef.ConfigMapRef.Name)
			}
			if ef.SecretRef != nil {
				_, ok := o.secrets[ef.SecretRef.Name]
				r.check(ok || optional(ef.SecretRef.Optional), "%s: envFrom Secret %s exists", cid, ef.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
				cm, ok := o.configMaps[ref.Name]
				_, has := map[string]string{}[""]
				if ok {
					_, has = cm.Data[ref.Key]
				}
				r.check(has || optional(ref.Optional), "%s: env %s from ConfigMap %s key %s exists", cid, e.Name, ref.Name, ref.Key)
			}
			if ref := e.ValueFrom.SecretKeyRef; ref != nil {
				s, ok := o.secrets[ref.Name]
				has := false
				if ok {
					_, inData := s.Data[ref.Key]
					_, inString := s.StringData[ref.Key]
					has = inData || inString
				}
				r.check(has || optional(ref.Optional), "%s: env %s from Secret %s key %s exists", cid, e.Name, ref.Name, ref.Key)
			}
		}
		for _, m := range c.VolumeMounts {
			found := false
			for _, v := range t.Spec.Volumes {
				found = found || v.Name == m.Name
			}
			r.check(found || isClaimTemplate(o, id, m.Name), "%s: volume mount %s has a volume", cid, m.Name)
		}
	}
}

func isClaimTemplate(o *objects, id, name string) bool {
	for _, s := range o.statefulsets {
		if "StatefulSet "+s.Name != id {
			continue
		}
		for _, c := range s.Spec.VolumeClaimTemplates {
			if c.Name == name {
				return true
			}
		}
	}
	return false
}

type envValue struct{ value, source string }

// effectiveEnv resolves a container's environment as the kubelet does: envFrom in order, then env.
func effectiveEnv(c corev1.Container, o *objects) map[string]envValue {
	env := map[string]envValue{}
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef != nil {
			if cm, ok := o.configMaps[ef.ConfigMapRef.Name]; ok {
				for k, v := range cm.Data {
					env[ef.Prefix+k] = envValue{v, "ConfigMap " + cm.Name}
				}
			}
		}
		if ef.SecretRef != nil {
			if s, ok := o.secrets[ef.SecretRef.Name]; ok {
				for k, v := range s.Data {
					env[ef.Prefix+k] = envValue{string(v), "Secret " + s.Name}
				}
				for k, v := range s.StringData {
					env[ef.Prefix+k] = envValue{v, "Secret " + s.Name}
				}
			}
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = envValue{e.Value, "env"}
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v := ""
			if s, ok := o.secrets[ref.Name]; ok {
				v = s.StringData[ref.Key]
				if b, ok := s.Data[ref.Key]; ok {
					v = string(b)
				}
			}
			env[e.Name] = envValue{v, "Secret " + ref.Name}
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			v := ""
			if cm, ok := o.configMaps[ref.Name]; ok {
				v = cm.Data[ref.Key]
			}
			env[e.Name] = envValue{v, "ConfigMap " + ref.Name}
		default:
			env[e.Name] = envValue{"", "fieldRef"}
		}
	}
	return env
}

func optional(b *bool) bool { return b != nil && *b }

func containerPortNamed(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

func containerHasPort(c corev1.Container, port intstr.IntOrString) bool {
	for _, p := range c.Ports {
		if (port.Type == intstr.String && p.Name == port.StrVal) || (port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
			return true
		}
	}
	return false
}

func podHasPort(t *corev1.PodTemplateSpec, target intstr.IntOrString, servicePort int32) bool {
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(servicePort)
	}
	for _, c := range t.Spec.Containers {
		if containerHasPort(c, target) {
			return true
		}
	}
	return false
}

func servicePort(s *corev1.Service, p networkingv1.ServiceBackendPort) *corev1.ServicePort {
	for i, sp := range s.Spec.Ports {
		if (p.Name != "" && sp.Name == p.Name) || (p.Name == "" && sp.Port == p.Number) {
			return &s.Spec.Ports[i]
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
