package render

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// repoRoot is the payguard repository the chart belongs to.
var repoRoot = filepath.Join(chartDir, "..", "..")

func find(t *testing.T, objs []object, kind, name string) *object {
	t.Helper()
	for i := range objs {
		if objs[i].kind == kind && objs[i].name == name {
			return &objs[i]
		}
	}
	return nil
}

func payguardYAML(t *testing.T, objs []object, name string) map[string]any {
	t.Helper()
	o := find(t, objs, "ConfigMap", name)
	if o == nil {
		t.Fatalf("no ConfigMap %s", name)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal([]byte(o.text), &cm); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["payguard.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func dataVolume(t *testing.T, spec corev1.PodSpec) corev1.Volume {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.Name == "payguard-data" {
			return v
		}
	}
	t.Fatal("no payguard-data volume")
	return corev1.Volume{}
}

// The single-replica bolt ledger is on a PersistentVolumeClaim by default (kept on uninstall, the pod
// replaced with Recreate so the ReadWriteOnce claim is free); an emptyDir only when asked, and then NOTES
// warns that the daily cap starts again from zero with a new pod. A Redis ledger gets an emptyDir (several
// replicas cannot share a ReadWriteOnce claim) and no claim is rendered for it.
func TestLedgerIsPersistentByDefault(t *testing.T) {
	c := loadChart(t)
	r, err := render(t, c, combos["example"], "v1.31.4", nil)
	if err != nil {
		t.Fatal(err)
	}
	objs := objects(t, r)
	pvc := find(t, objs, "PersistentVolumeClaim", "t-payguard-data")
	if pvc == nil || !strings.Contains(pvc.text, "helm.sh/resource-policy: keep") {
		t.Fatalf("default render: PVC %v, want t-payguard-data kept on uninstall", pvc)
	}
	d := deployments(t, objs)["t-payguard-example"]
	if v := dataVolume(t, d.Spec.Template.Spec); v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "t-payguard-data" ||
		d.Spec.Strategy.Type != "Recreate" {
		t.Fatalf("default example: data volume %+v, strategy %q", v.VolumeSource, d.Spec.Strategy.Type)
	}
	if strings.Contains(r["payguard/templates/NOTES.txt"], "WARNING") {
		t.Errorf("NOTES warn with persistence on:\n%s", r["payguard/templates/NOTES.txt"])
	}

	r, err = render(t, c, append([]string{"persistence.enabled=false"}, combos["example"]...), "v1.31.4", nil)
	if err != nil {
		t.Fatal(err)
	}
	objs = objects(t, r)
	if count(objs, "PersistentVolumeClaim") != 0 || dataVolume(t, deployments(t, objs)["t-payguard-example"].Spec.Template.Spec).EmptyDir == nil {
		t.Fatal("persistence.enabled=false: want an emptyDir and no claim")
	}
	if notes := r["payguard/templates/NOTES.txt"]; !strings.Contains(notes, "WARNING: persistence.enabled=false") || !strings.Contains(notes, "starts again from zero") {
		t.Errorf("NOTES do not warn about the emptyDir:\n%s", notes)
	}

	objs = renderOK(t, c, combos["fleet"], "v1.31.4")
	if count(objs, "PersistentVolumeClaim") != 0 || dataVolume(t, deployments(t, objs)["t-payguard-proxy"].Spec.Template.Spec).EmptyDir == nil {
		t.Fatal("a Redis fleet got a claim: two replicas would share one ReadWriteOnce volume")
	}
}

// proxyFleet and serve each get a PodDisruptionBudget and topology spread constraints that select exactly
// their own Deployment's pods (not the other's, not the sidecar pods); off, neither is rendered.
func TestFleetAvailability(t *testing.T) {
	c := loadChart(t)
	objs := renderOK(t, c, combos["everything"], "v1.31.4")
	deps := deployments(t, objs)
	pods := map[string]labels.Set{}
	for name, d := range deps {
		pods[name] = labels.Set(d.Spec.Template.Labels)
	}
	for _, component := range []string{"proxy", "serve"} {
		name := "t-payguard-" + component
		o := find(t, objs, "PodDisruptionBudget", name)
		if o == nil {
			t.Fatalf("no PodDisruptionBudget %s", name)
		}
		var pdb policyv1.PodDisruptionBudget
		if err := yaml.UnmarshalStrict([]byte(o.text), &pdb); err != nil {
			t.Fatal(err)
		}
		if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
			t.Errorf("%s: maxUnavailable %v", name, pdb.Spec.MaxUnavailable)
		}
		sel := labels.SelectorFromSet(pdb.Spec.Selector.MatchLabels)
		for dname, l := range pods {
			if sel.Matches(l) != (dname == name) {
				t.Errorf("PDB %s selects %s: %v", name, dname, sel.Matches(l))
			}
		}
		spread := deps[name].Spec.Template.Spec.TopologySpreadConstraints
		keys := []string{}
		for _, tsc := range spread {
			keys = append(keys, tsc.TopologyKey)
			s := labels.SelectorFromSet(tsc.LabelSelector.MatchLabels)
			for dname, l := range pods {
				if s.Matches(l) != (dname == name) {
					t.Errorf("%s's spread over %s selects %s: %v", name, tsc.TopologyKey, dname, s.Matches(l))
				}
			}
		}
		if strings.Join(keys, ",") != "kubernetes.io/hostname,topology.kubernetes.io/zone" {
			t.Errorf("%s spreads over %v", name, keys)
		}
	}
	if len(deps["t-payguard-example"].Spec.Template.Spec.TopologySpreadConstraints) != 0 {
		t.Error("the example (one agent pod) got spread constraints")
	}
	off := renderOK(t, c, append([]string{"podDisruptionBudget.enabled=false", "topologySpread.enabled=false"}, combos["everything"]...), "v1.31.4")
	if count(off, "PodDisruptionBudget") != 0 || len(deployments(t, off)["t-payguard-proxy"].Spec.Template.Spec.TopologySpreadConstraints) != 0 {
		t.Error("disabled, the PDBs or spread constraints are still rendered")
	}
}

// admin.hosts becomes the proxy's admin.hosts (the names besides localhost and IPs it answers to, 421 for
// the rest), in the sidecar's and the fleet's configuration; the OFAC snapshot's path is the one the image
// ships it at (docker/payguard.yaml's seed_dir, checked against the Dockerfile by scripts/check-dockerfile.sh).
func TestAdminHostsAndSeedReachTheConfig(t *testing.T) {
	c := loadChart(t)
	hosts := []string{"t-payguard-admin", "t-payguard-admin.agents.svc"}
	objs := renderOK(t, c, append([]string{"admin.hosts={" + strings.Join(hosts, ",") + "}"}, combos["fleet"]...), "v1.31.4")
	for _, cm := range []string{"t-payguard", "t-payguard-fleet"} {
		cfg := payguardYAML(t, objs, cm)
		got := fmt.Sprint(cfg["admin"].(map[string]any)["hosts"])
		if got != fmt.Sprint([]any{hosts[0], hosts[1]}) {
			t.Errorf("%s: admin.hosts %s, want %v", cm, got, hosts)
		}
	}
	image, err := os.ReadFile(filepath.Join(repoRoot, "docker", "payguard.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var imageCfg struct {
		Screening struct {
			Sanctions struct {
				SeedDir string `json:"seed_dir"`
			} `json:"sanctions"`
		} `json:"screening"`
	}
	if err := yaml.Unmarshal(image, &imageCfg); err != nil || imageCfg.Screening.Sanctions.SeedDir == "" {
		t.Fatalf("docker/payguard.yaml has no seed_dir (%v)", err)
	}
	seed := payguardYAML(t, renderOK(t, c, nil, "v1.31.4"), "t-payguard")["screening"].(map[string]any)["sanctions"].(map[string]any)["seed_dir"]
	if seed != imageCfg.Screening.Sanctions.SeedDir {
		t.Errorf("the chart's seed_dir %v is not where the image ships the snapshot (%s)", seed, imageCfg.Screening.Sanctions.SeedDir)
	}
}

// promRule is the part of monitoring.coreos.com/v1 PrometheusRule the chart renders, decoded strictly.
type promRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

func decodePrometheusRule(text string) (*promRule, error) {
	var r promRule
	if err := yaml.UnmarshalStrict([]byte(text), &r); err != nil {
		return nil, err
	}
	if len(r.Spec.Groups) == 0 {
		return nil, fmt.Errorf("PrometheusRule without groups")
	}
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			if rule.Alert == "" || rule.Expr == "" || rule.Labels["severity"] == "" || rule.Annotations["summary"] == "" {
				return nil, fmt.Errorf("alert %q lacks a name, expr, severity or summary", rule.Alert)
			}
		}
	}
	return &r, nil
}

// dashboard is the part of a Grafana dashboard the checks read.
type dashboard struct {
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// metricName is a payguard metric in a PromQL expression.
var metricName = regexp.MustCompile(`\bpayguard_[a-z0-9_]+\b`)

// registeredMetrics reads the metric names payguard registers from its Go source (not tests): the Name of
// every prometheus *Opts and the first argument of every prometheus.NewDesc. Histograms also answer to
// their _bucket, _sum and _count series.
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	named := regexp.MustCompile(`(?s)(Counter|Gauge|Histogram|Summary)Opts\{\s*Name:\s*"(payguard_[a-z0-9_]+)"`)
	desc := regexp.MustCompile(`prometheus\.NewDesc\(\s*"(payguard_[a-z0-9_]+)"`)
	out := map[string]bool{}
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "charts" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range named.FindAllStringSubmatch(string(b), -1) {
			out[m[2]] = true
			if m[1] == "Histogram" || m[1] == "Summary" {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					out[m[2]+s] = true
				}
			}
		}
		for _, m := range desc.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The scan must see the metrics the proxy is known for, or it proves nothing.
	for _, n := range []string{"payguard_decisions_total", "payguard_holds_pending", "payguard_ledger_up", "payguard_sanctions_list_age_seconds", "payguard_decision_duration_seconds_bucket"} {
		if !out[n] {
			t.Fatalf("the source scan did not find %s (found %d names)", n, len(out))
		}
	}
	return out
}

// unknownMetrics lists the payguard metric names in exprs that payguard does not register.
func unknownMetrics(exprs []string, known map[string]bool) []string {
	var out []string
	for _, e := range exprs {
		for _, n := range metricName.FindAllString(e, -1) {
			if !known[n] {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// The dashboard and the alerts render, decode (the PrometheusRule strictly, the dashboard as JSON with a
// query on every panel), cover what an on-call person needs, compare spend with the configured daily cap, and
// use only metric names payguard registers (read from its Go source): a renamed metric fails here, not in a
// silent, empty panel or an alert that can never fire.
func TestAlertsAndDashboardUseRegisteredMetrics(t *testing.T) {
	c := loadChart(t)
	known := registeredMetrics(t)
	if got := unknownMetrics([]string{"rate(payguard_decisions_total[5m]) + payguard_made_up_total"}, known); len(got) != 1 || got[0] != "payguard_made_up_total" {
		t.Fatalf("the check does not catch an unknown metric: %v", got)
	}
	objs := renderOK(t, c, []string{"grafanaDashboard.enabled=true", "prometheusRule.enabled=true", "rules.daily_cap_usd=40"}, "v1.31.4")
	var exprs []string

	o := find(t, objs, "PrometheusRule", "t-payguard")
	if o == nil {
		t.Fatal("no PrometheusRule")
	}
	rule, err := decodePrometheusRule(o.text)
	if err != nil {
		t.Fatal(err)
	}
	alerts := map[string]string{}
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = r.Expr
			exprs = append(exprs, r.Expr)
		}
	}
	for _, a := range []string{"PayguardSanctionsListStale", "PayguardStoreFailing", "PayguardHoldsWaiting", "PayguardSpendNearCap"} {
		if alerts[a] == "" {
			t.Errorf("no alert %s", a)
		}
	}
	if !strings.HasSuffix(alerts["PayguardSpendNearCap"], ">= 0.8 * 40") || !strings.HasSuffix(alerts["PayguardSanctionsListStale"], "> 172800") {
		t.Errorf("thresholds: %v", alerts)
	}

	cmo := find(t, objs, "ConfigMap", "t-payguard-dashboard")
	if cmo == nil {
		t.Fatal("no dashboard ConfigMap")
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(cmo.text), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("dashboard labels %v", cm.Labels)
	}
	var dash dashboard
	if err := json.Unmarshal([]byte(cm.Data["payguard.json"]), &dash); err != nil {
		t.Fatal(err)
	}
	for _, v := range dash.Templating.List {
		if v.Name == "daily_cap" && v.Query != "40" {
			t.Errorf("the dashboard's daily_cap is %v, want rules.daily_cap_usd 40", v.Query)
		}
	}
	all := ""
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				t.Errorf("panel %q has an empty query", p.Title)
			}
			exprs = append(exprs, tg.Expr)
			all += tg.Expr + "\n"
		}
	}
	for _, want := range []string{"payguard_decisions_total", "payguard_holds_pending", "payguard_usd_spent_today", "$daily_cap",
		"payguard_sanctions_list_age_seconds", "payguard_ledger_up", "payguard_decision_duration_seconds_bucket"} {
		if !strings.Contains(all, want) {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
	if bad := unknownMetrics(exprs, known); len(bad) != 0 {
		t.Errorf("the dashboard or the alerts use metrics payguard does not register: %v", bad)
	}
	if count(renderOK(t, c, nil, "v1.31.4"), "PrometheusRule") != 0 {
		t.Error("a PrometheusRule is rendered by default (the CRD may not exist)")
	}
}
