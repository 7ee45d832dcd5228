package render

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/strvals"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart under test; PAYGUARD_CHART_DIR points the tests at another copy (e.g. an older one).
var chartDir = envOr("PAYGUARD_CHART_DIR", "../..")

// combos are the documented values combinations (charts/payguard/README.md), as --set strings.
var combos = map[string][]string{
	"defaults":         nil,
	"example":          {"example.enabled=true"},
	"example-native":   {"example.enabled=true", "sidecar.native=true"},
	"example-regular":  {"example.enabled=true", "sidecar.native=false"},
	"persistence":      {"example.enabled=true", "persistence.enabled=true"},
	"ephemeral":        {"example.enabled=true", "persistence.enabled=false"},
	"monitoring":       {"example.enabled=true", "serviceMonitor.enabled=true", "grafanaDashboard.enabled=true", "prometheusRule.enabled=true", "admin.hosts[0]=t-payguard-admin.agents.svc"},
	"existing-secrets": {"example.enabled=true", "ca.existingSecret=my-ca", "admin.token.existingSecret=my-token", "receiptKeys.existingSecret=my-keys"},
	"redis-replicas":   {"example.enabled=true", "store.driver=redis", "store.redis.urlSecret=redis-url", "example.replicas=2"},
	"placement":        {"example.enabled=true", "imagePullSecrets[0].name=reg", "nodeSelector.pool=agents", "tolerations[0].key=agents", "tolerations[0].operator=Exists", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists"},
	"digest":           {"example.enabled=true", "image.digest=sha256:" + strings.Repeat("ab", 32)},
	"example-netpol":   {"example.enabled=true", "networkPolicy.enabled=true"},
	"fleet":            {"proxyFleet.enabled=true", "store.driver=redis", "store.redis.urlSecret=redis-url", "receiptKeys.existingSecret=keys", "networkPolicy.enabled=true", "networkPolicy.agentPodSelector.app=my-agent", "networkPolicy.adminFrom[0].namespaceSelector.matchLabels.name=monitoring", "serviceMonitor.enabled=true"},
	"serve":            {"serve.enabled=true", "serve.server.fees.pay_to=0x1111111111111111111111111111111111111111", "serve.server.contact=mailto:ops@example.com", "serve.server.fees.facilitator_url=https://facilitator.example.com", "store.driver=redis", "store.redis.urlSecret=redis-url", "receiptKeys.existingSecret=keys", "networkPolicy.enabled=true", "serviceMonitor.enabled=true"},
	"everything":       {"example.enabled=true", "proxyFleet.enabled=true", "serve.enabled=true", "serve.server.fees.pay_to=0x1111111111111111111111111111111111111111", "serve.server.contact=mailto:ops@example.com", "serve.server.fees.facilitator_url=https://facilitator.example.com", "store.driver=redis", "store.redis.urlSecret=redis-url", "receiptKeys.existingSecret=keys", "networkPolicy.enabled=true", "networkPolicy.agentPodSelector.app=my-agent", "serviceMonitor.enabled=true", "example.replicas=2", "grafanaDashboard.enabled=true", "prometheusRule.enabled=true"},
}

var kubeVersions = []string{"v1.27.16", "v1.31.4"}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func caps(t *testing.T, version string) *chartutil.Capabilities {
	t.Helper()
	kv, err := chartutil.ParseKubeVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	c := chartutil.DefaultCapabilities.Copy()
	c.KubeVersion = *kv
	return c
}

func parseSets(t *testing.T, sets []string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	for _, s := range sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			t.Fatalf("--set %s: %v", s, err)
		}
	}
	return vals
}

// render is `helm template` / `helm install` for one values set and cluster version: kubeVersion constraint,
// schema validation, then the engine. provider answers lookup (nil: no cluster, as `helm template`).
func render(t *testing.T, c *chart.Chart, sets []string, kube string, provider engine.ClientProvider) (map[string]string, error) {
	t.Helper()
	if c.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(c.Metadata.KubeVersion, kube) { // as helm install
		return nil, fmt.Errorf("chart requires kubeVersion %s, cluster is %s", c.Metadata.KubeVersion, kube)
	}
	vals, err := chartutil.ToRenderValues(c, parseSets(t, sets), chartutil.ReleaseOptions{Name: "t", Namespace: "agents", IsInstall: true}, caps(t, kube))
	if err != nil {
		return nil, err
	}
	if provider != nil {
		return engine.RenderWithClientProvider(c, vals, provider)
	}
	return engine.Render(c, vals)
}

// object is one rendered manifest.
type object struct {
	file, text string
	kind       string
	apiVersion string
	name       string
}

func objects(t *testing.T, rendered map[string]string) []object {
	t.Helper()
	var files []string
	for f := range rendered {
		files = append(files, f)
	}
	sort.Strings(files)
	var out []object
	for _, f := range files {
		if !strings.HasSuffix(f, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(rendered[f], "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var head struct {
				APIVersion string                `json:"apiVersion"`
				Kind       string                `json:"kind"`
				Metadata   struct{ Name string } `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s: %v\n%s", f, err, doc)
			}
			if head.Kind == "" {
				continue
			}
			out = append(out, object{file: f, text: doc, kind: head.Kind, apiVersion: head.APIVersion, name: head.Metadata.Name})
		}
	}
	return out
}

func renderOK(t *testing.T, c *chart.Chart, sets []string, kube string) []object {
	t.Helper()
	r, err := render(t, c, sets, kube, nil)
	if err != nil {
		t.Fatalf("render %v on %s: %v", sets, kube, err)
	}
	return objects(t, r)
}

// TestEveryComboDecodesStrictly renders every combination on both versions; 1.31 objects are decoded here
// into k8s.io/api v0.31 types, 1.27 objects are written out and decoded by ../kube127 (k8s.io/api v0.27).
func TestEveryComboDecodesStrictly(t *testing.T) {
	c := loadChart(t)
	out127 := t.TempDir()
	n := 0
	for name, sets := range combos {
		for _, kube := range kubeVersions {
			if name == "example-native" && kube < "v1.28" {
				continue // refused there (TestBadCombinationsFail)
			}
			objs := renderOK(t, c, sets, kube)
			if len(objs) == 0 {
				t.Fatalf("%s on %s rendered nothing", name, kube)
			}
			for _, o := range objs {
				if strings.HasPrefix(kube, "v1.27.") {
					n++
					if err := os.WriteFile(filepath.Join(out127, fmt.Sprintf("%04d-%s-%s.yaml", n, name, o.kind)), []byte(o.text), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := decode131(o); err != nil {
					t.Errorf("%s on %s: %s %s: %v", name, kube, o.kind, o.name, err)
				}
			}
		}
	}
	runKube127(t, out127, true)
}

// The 1.27 decoder is not a rubber stamp: a native sidecar (what the chart rendered for every version before
// sidecar.native auto) is refused by Kubernetes 1.27's types.
func TestKube127RefusesANativeSidecar(t *testing.T) {
	c := loadChart(t)
	dir := t.TempDir()
	for i, o := range renderOK(t, c, []string{"example.enabled=true"}, "v1.31.4") {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d.yaml", i)), []byte(o.text), 0o644)
	}
	out := runKube127(t, dir, false)
	if !strings.Contains(out, `Deployment: error unmarshaling JSON: while decoding JSON: json: unknown field "restartPolicy"`) {
		t.Fatalf("kube127 output:\n%s", out)
	}
}

func runKube127(t *testing.T, dir string, wantOK bool) string {
	t.Helper()
	cmd := exec.Command("go", "run", ".", dir)
	cmd.Dir = "../kube127"
	out, err := cmd.CombinedOutput()
	if (err == nil) != wantOK {
		t.Fatalf("kube127 (want ok=%v): %v\n%s", wantOK, err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
	return string(out)
}

func decode131(o object) error {
	var obj any
	switch o.apiVersion + "/" + o.kind {
	case "v1/ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1/Secret":
		obj = &corev1.Secret{}
	case "v1/Service":
		obj = &corev1.Service{}
	case "v1/PersistentVolumeClaim":
		obj = &corev1.PersistentVolumeClaim{}
	case "apps/v1/Deployment":
		obj = &appsv1.Deployment{}
	case "networking.k8s.io/v1/NetworkPolicy":
		obj = &networkingv1.NetworkPolicy{}
	case "policy/v1/PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "monitoring.coreos.com/v1/ServiceMonitor":
		return checkServiceMonitor(o.text)
	case "monitoring.coreos.com/v1/PrometheusRule":
		_, err := decodePrometheusRule(o.text)
		return err
	default:
		return fmt.Errorf("%s %s is not a type this check knows", o.apiVersion, o.kind)
	}
	return yaml.UnmarshalStrict([]byte(o.text), obj)
}

// checkServiceMonitor decodes the ServiceMonitor strictly into the fields of the Prometheus Operator's
// monitoring.coreos.com/v1 CRD the chart uses (its Go types would pull in the operator's whole module).
func checkServiceMonitor(text string) error {
	var sm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name   string            `json:"name"`
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Endpoints []struct {
				Port     string `json:"port"`
				Path     string `json:"path"`
				Interval string `json:"interval"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict([]byte(text), &sm); err != nil {
		return err
	}
	if len(sm.Spec.Endpoints) == 0 || len(sm.Spec.Selector.MatchLabels) == 0 {
		return fmt.Errorf("ServiceMonitor without endpoints or selector")
	}
	return nil
}

// A typo'd or ill-typed value is refused by the schema before anything renders.
func TestSchemaRefusesBadValues(t *testing.T) {
	c := loadChart(t)
	for _, set := range []string{
		"rules.max_per_paymnt_usd=2",
		"rules.daily_cap_usd=-1",
		"rules.max_per_payment_usd=lots",
		"proxy.holdWait=30 seconds",
		"proxy.port=0",
		"sidecar.native=maybe",
		"store.driver=postgres",
		"image.digest=latest",
		"serve.server.fees.pay_too=0x1",
		"admin.tokn.value=x",
	} {
		_, err := render(t, c, []string{set}, "v1.31.4", nil)
		if err == nil || !strings.Contains(err.Error(), "schema") {
			t.Errorf("--set %s: err %v, want a schema error", set, err)
		}
	}
	// And the values a user may set are accepted (null disables max_price_multiple).
	if _, err := render(t, c, []string{"rules.max_price_multiple=null", "rules.daily_cap_usd=0.5"}, "v1.31.4", nil); err != nil {
		t.Fatal(err)
	}
}

// Render-time refusals of combinations the schema cannot express.
func TestBadCombinationsFail(t *testing.T) {
	c := loadChart(t)
	for _, tc := range []struct {
		sets []string
		kube string
		want string
	}{
		{[]string{"example.enabled=true", "example.replicas=2"}, "v1.31.4", "own daily cap"},
		{[]string{"proxyFleet.enabled=true"}, "v1.31.4", "store.driver redis"},
		{[]string{"proxyFleet.enabled=true", "store.driver=redis", "store.redis.urlSecret=r"}, "v1.31.4", "receiptKeys.existingSecret"},
		{[]string{"serve.enabled=true", "serve.replicas=1"}, "v1.31.4", "pay_to"},
		{[]string{"serve.enabled=true", "serve.replicas=1", "serve.server.fees.pay_to=0x1111111111111111111111111111111111111111"}, "v1.31.4", "serve.server.contact is required"},
		{[]string{"serve.enabled=true", "serve.replicas=1", "serve.server.fees.pay_to=0x1111111111111111111111111111111111111111", "serve.server.contact=mailto:a@b.c"}, "v1.31.4", "facilitator_url is required on eip155:8453"},
		{[]string{"example.enabled=true", "sidecar.native=true"}, "v1.27.16", "needs Kubernetes >= 1.28"},
		{[]string{"example.enabled=true", "store.driver=redis"}, "v1.31.4", "urlSecret is required"},
		{nil, "v1.26.5", "kubeVersion"},
	} {
		_, err := render(t, c, tc.sets, tc.kube, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v on %s: err %v, want %q", tc.sets, tc.kube, err, tc.want)
		}
	}
}

// helm lint --strict, through Helm's linter.
func TestLintStrict(t *testing.T) {
	for _, sets := range [][]string{{"example.enabled=true"}, combos["everything"]} {
		for _, kube := range kubeVersions {
			kv, _ := chartutil.ParseKubeVersion(kube)
			l := lint.AllWithKubeVersion(chartDir, parseSets(t, sets), "agents", kv)
			for _, m := range l.Messages {
				if m.Severity >= support.InfoSev && !strings.Contains(m.Error(), "icon is recommended") {
					t.Errorf("lint %v on %s: %s", sets, kube, m)
				}
			}
		}
	}
}
