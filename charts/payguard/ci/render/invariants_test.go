package render

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"
)

func deployments(t *testing.T, objs []object) map[string]*appsv1.Deployment {
	t.Helper()
	out := map[string]*appsv1.Deployment{}
	for _, o := range objs {
		if o.kind == "Deployment" {
			d := &appsv1.Deployment{}
			if err := yaml.Unmarshal([]byte(o.text), d); err != nil {
				t.Fatal(err)
			}
			out[d.Name] = d
		}
	}
	return out
}

// Every container in every combination is non-root, read-only, without privilege escalation, with every
// capability dropped and with resources; every object carries the standard labels; every Secret the chart
// renders survives uninstall.
func TestInvariants(t *testing.T) {
	c := loadChart(t)
	for name, sets := range combos {
		for _, kube := range kubeVersions {
			if name == "example-native" && kube < "v1.28" {
				continue
			}
			objs := renderOK(t, c, sets, kube)
			for _, o := range objs {
				var meta struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				}
				yaml.Unmarshal([]byte(o.text), &meta)
				for _, l := range []string{"helm.sh/chart", "app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"} {
					if meta.Metadata.Labels[l] == "" {
						t.Errorf("%s/%s: %s %s lacks label %s", name, kube, o.kind, o.name, l)
					}
				}
				if o.kind == "Secret" && meta.Metadata.Annotations["helm.sh/resource-policy"] != "keep" {
					t.Errorf("%s/%s: Secret %s is not kept on uninstall", name, kube, o.name)
				}
			}
			for dname, d := range deployments(t, objs) {
				spec := d.Spec.Template.Spec
				if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
					t.Errorf("%s/%s: %s mounts a service account token", name, kube, dname)
				}
				all := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
				for _, ctr := range all {
					sc := ctr.SecurityContext
					where := name + "/" + kube + ": " + dname + "/" + ctr.Name
					if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
						sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || len(sc.Capabilities.Drop) == 0 || sc.Capabilities.Drop[0] != "ALL" {
						t.Errorf("%s: securityContext %+v", where, sc)
					}
					if len(ctr.Resources.Requests) == 0 || ctr.Resources.Limits.Memory().IsZero() {
						t.Errorf("%s: resources %+v", where, ctr.Resources)
					}
					checkProbes(t, where, ctr)
				}
				if strings.Contains(strings.Join(sets, ","), "imagePullSecrets") && len(spec.ImagePullSecrets) == 0 {
					t.Errorf("%s/%s: %s has no imagePullSecrets", name, kube, dname)
				}
			}
		}
	}
}

// checkProbes: a payguard container's startup and liveness probes ask /healthz (the process answers) and its
// readiness probe /readyz (it can decide and record). A store that cannot record (full disk, wiped Redis ledger)
// or a list not loaded yet is a readiness failure that a restart would not mend: on liveness it would be a
// restart loop. Containers without probes (the agent in the examples) are not payguard's.
func checkProbes(t *testing.T, where string, ctr corev1.Container) {
	t.Helper()
	path := func(p *corev1.Probe) string {
		if p == nil || p.HTTPGet == nil {
			return ""
		}
		return p.HTTPGet.Path
	}
	if ctr.LivenessProbe == nil && ctr.ReadinessProbe == nil && ctr.StartupProbe == nil {
		return
	}
	if got := path(ctr.LivenessProbe); got != "/healthz" {
		t.Errorf("%s: liveness probe %q, want /healthz", where, got)
	}
	if got := path(ctr.StartupProbe); ctr.StartupProbe != nil && got != "/healthz" {
		t.Errorf("%s: startup probe %q, want /healthz", where, got)
	}
	if got := path(ctr.ReadinessProbe); got != "/readyz" {
		t.Errorf("%s: readiness probe %q, want /readyz", where, got)
	}
}

// The sidecar is native on 1.29+ (an init container that restarts) and a regular container before.
func TestSidecarFollowsTheClusterVersion(t *testing.T) {
	c := loadChart(t)
	for kube, native := range map[string]bool{"v1.27.16": false, "v1.28.9": false, "v1.29.0": true, "v1.31.4": true} {
		d := deployments(t, renderOK(t, c, []string{"example.enabled=true"}, kube))["t-payguard-example"]
		spec := d.Spec.Template.Spec
		if native {
			if len(spec.InitContainers) != 1 || spec.InitContainers[0].RestartPolicy == nil || *spec.InitContainers[0].RestartPolicy != corev1.ContainerRestartPolicyAlways || len(spec.Containers) != 1 {
				t.Errorf("%s: want a native sidecar, got init %d containers %d", kube, len(spec.InitContainers), len(spec.Containers))
			}
		} else if len(spec.InitContainers) != 0 || len(spec.Containers) != 2 {
			t.Errorf("%s: want a regular sidecar container, got init %d containers %d", kube, len(spec.InitContainers), len(spec.Containers))
		}
	}
}

// The NetworkPolicies exist when enabled, confine the agents to the proxy fleet and DNS, and let the admin
// port be reached only from adminFrom.
func TestNetworkPolicy(t *testing.T) {
	c := loadChart(t)
	if n := count(renderOK(t, c, combos["example"], "v1.31.4"), "NetworkPolicy"); n != 0 {
		t.Fatalf("%d NetworkPolicies rendered while disabled", n)
	}
	// With only the example and no adminFrom, nothing may connect to the sidecar's pods.
	example := renderOK(t, c, combos["example-netpol"], "v1.31.4")
	if n := count(example, "NetworkPolicy"); n != 1 {
		t.Fatalf("%d NetworkPolicies rendered for the example with networkPolicy.enabled; want 1", n)
	}
	for _, o := range example {
		if o.kind == "NetworkPolicy" {
			p := &networkingv1.NetworkPolicy{}
			if err := yaml.Unmarshal([]byte(o.text), p); err != nil {
				t.Fatal(err)
			}
			if len(p.Spec.PolicyTypes) != 1 || p.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress || p.Spec.Ingress == nil || len(p.Spec.Ingress) != 0 ||
				p.Spec.PodSelector.MatchLabels["payguard.dev/admin"] != "true" {
				t.Fatalf("example policy %+v", p.Spec)
			}
		}
	}
	pols := map[string]*networkingv1.NetworkPolicy{}
	for _, o := range renderOK(t, c, combos["fleet"], "v1.31.4") {
		if o.kind == "NetworkPolicy" {
			p := &networkingv1.NetworkPolicy{}
			yaml.Unmarshal([]byte(o.text), p)
			pols[p.Name] = p
		}
	}
	agents := pols["t-payguard-agents"]
	if agents == nil || agents.Spec.PodSelector.MatchLabels["app"] != "my-agent" || len(agents.Spec.Egress) != 2 ||
		agents.Spec.Egress[0].To[0].PodSelector.MatchLabels["app.kubernetes.io/component"] != "proxy" ||
		agents.Spec.Egress[0].Ports[0].Port.IntValue() != 8402 || agents.Spec.Egress[1].Ports[0].Port.IntValue() != 53 {
		t.Fatalf("agents policy %+v", agents)
	}
	admin := pols["t-payguard-admin"]
	if admin == nil || len(admin.Spec.Ingress) != 2 || admin.Spec.Ingress[0].Ports[0].Port.IntValue() != 8403 ||
		admin.Spec.Ingress[0].From[0].NamespaceSelector.MatchLabels["name"] != "monitoring" {
		t.Fatalf("admin policy %+v", admin)
	}
}

func count(objs []object, kind string) int {
	n := 0
	for _, o := range objs {
		if o.kind == kind {
			n++
		}
	}
	return n
}

// clusterWith answers Helm's lookup from a fake API server holding objs.
type clusterWith struct{ client dynamic.Interface }

func (c clusterWith) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return c.client.Resource(gv.WithResource(strings.ToLower(kind) + "s")), true, nil
}

// An upgrade (or a GitOps re-sync that uses lookup) keeps the CA and the admin token the first install
// generated: the agents keep trusting the same certificate.
func TestUpgradeKeepsTheCAAndToken(t *testing.T) {
	c := loadChart(t)
	first := renderOK(t, c, nil, "v1.31.4")
	var existing []runtime.Object
	secrets := map[string]string{}
	for _, o := range first {
		if o.kind != "Secret" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(o.text), &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace("agents")
		existing = append(existing, u)
		secrets[o.name] = o.text
	}
	if len(secrets) != 2 {
		t.Fatalf("first render has %d Secrets", len(secrets))
	}
	scheme := runtime.NewScheme()
	corev1.AddToScheme(scheme)
	cluster := clusterWith{dynamicfake.NewSimpleDynamicClient(scheme, existing...)}
	if _, err := cluster.client.Resource(corev1.SchemeGroupVersion.WithResource("secrets")).Namespace("agents").Get(context.Background(), "t-payguard-ca", metav1.GetOptions{}); err != nil {
		t.Fatalf("fake cluster: %v", err)
	}
	r, err := render(t, c, nil, "v1.31.4", cluster)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objects(t, r) {
		if o.kind == "Secret" && o.text != secrets[o.name] {
			t.Errorf("Secret %s changed on upgrade:\n%s\nwas\n%s", o.name, o.text, secrets[o.name])
		}
	}
	// Without a cluster (helm template) a new CA is generated: the README says to use ca.existingSecret there.
	again := renderOK(t, c, nil, "v1.31.4")
	for _, o := range again {
		if o.name == "t-payguard-ca" && o.text == secrets[o.name] {
			t.Error("two offline renders produced the same CA: the lookup test above proves nothing")
		}
	}
}

// The image the chart runs is the version the chart says: values' image.tag is the appVersion, which
// scripts/build.sh stamps into the binary (`payguard version`) and the release workflow tags the image with.
func TestImageTagIsTheAppVersion(t *testing.T) {
	c := loadChart(t)
	tag, _ := c.Values["image"].(map[string]any)["tag"].(string)
	if tag == "" || tag != c.Metadata.AppVersion {
		t.Fatalf("values.yaml image.tag %q != Chart.yaml appVersion %q", tag, c.Metadata.AppVersion)
	}
}
