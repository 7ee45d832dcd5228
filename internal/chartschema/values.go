package chartschema

import "github.com/payguard/payguard/policy"

// promDuration is a Prometheus duration as the alerts' for: takes it.
const promDuration = "^[0-9]+(ms|s|m|h|d|w|y)$"

// chart is the schema of charts/payguard/values.yaml. Values that become keys of payguard.yaml are
// g.configKey(...) (type and description from the config field); the rest are the chart's own.
func (g *generator) chart() Schema {
	k8s := func(what string) Schema {
		return openObj(what + " (a Kubernetes object, passed through as written).")
	}
	resources := k8s("Container resources (requests, limits)")
	podPlacement := Schema{
		"nodeSelector": with(openObj("Node labels the chart's pods must match."), "additionalProperties", Schema{"type": "string"}),
		"tolerations":  list("Tolerations of the chart's pods.", Schema{"type": "object"}),
		"affinity":     k8s("Affinity of the chart's pods"),
	}
	rules := g.ofType(typeOfRules())
	for _, p := range rules["properties"].(Schema) {
		if p := p.(Schema); p["type"] == "array" {
			p["maxItems"] = policy.MaxListEntries // SPEC's limit, enforced by Rules.Validate
		}
	}
	rules["description"] = "The rules, with SPEC's snake_case names (policy.Rules; omitted rules keep SPEC's defaults). Copied into payguard.yaml's rules: block."
	server := g.configKey("server")
	props := server["properties"].(Schema)
	delete(props, "listen")         // the chart sets it from serve.port
	delete(props, "metrics_listen") // and this from serve.metricsPort
	server["description"] = "payguard.yaml's server: section for `payguard serve` (config.ServerConfig; listen and metrics_listen come from serve.port and serve.metricsPort)."

	root := obj("payguard chart values.", Schema{
		"global":           openObj("Helm's global values (set by a parent chart)."),
		"nameOverride":     str("Replaces \"payguard\" in resource names."),
		"fullnameOverride": str("Replaces <release>-payguard as the resource name prefix."),
		"image": obj("The payguard image.", Schema{
			"repository": str("Image repository."),
			"tag":        str("Image tag; keep it at the chart's appVersion (what `payguard version` in the image says)."),
			"digest":     with(str("Image digest (sha256:...); when set the image is pulled by digest."), "pattern", "^(sha256:[0-9a-f]{64})?$"),
			"pullPolicy": enum("Image pull policy.", "Always", "IfNotPresent", "Never"),
		}),
		"imagePullSecrets": list("Secrets for pulling the image, as [{name: ...}].",
			obj("A pull secret.", Schema{"name": str("Secret name.")})),
		"sidecar": obj("The payguard container next to an agent (named template payguard.sidecar).", Schema{
			"native":            enum("auto: a native sidecar (init container with restartPolicy: Always) when the cluster is Kubernetes >= 1.29, else a regular container; true or false force it.", "auto", true, false),
			"resources":         resources,
			"extraArgs":         list("Extra arguments to `payguard proxy`.", Schema{"type": "string"}),
			"extraEnv":          list("Extra environment variables (EnvVar objects).", Schema{"type": "object"}),
			"extraVolumeMounts": list("Extra volume mounts (VolumeMount objects).", Schema{"type": "object"}),
			"extraVolumes":      list("Extra pod volumes (Volume objects), added by payguard.volumes.", Schema{"type": "object"}),
		}),
		"proxy": obj("The forward proxy.", Schema{
			"port":                port("The proxy's port (HTTP_PROXY / HTTPS_PROXY for the agent)."),
			"tunnelHosts":         g.configKey("proxy.tunnel_hosts"),
			"upstreamCAFiles":     g.configKey("proxy.upstream_ca_files"),
			"holdWait":            g.configKey("proxy.hold_wait"),
			"holdTTL":             g.configKey("proxy.hold_ttl"),
			"budget":              with(g.configKey("proxy.budget"), "minLength", 1),
			"certCacheSize":       with(g.configKey("proxy.cert_cache_size"), "minimum", 1),
			"maxIdleConnsPerHost": with(g.configKey("proxy.max_idle_conns_per_host"), "minimum", 1),
		}),
		"admin": obj("The approval API, /healthz, /readyz and /metrics.", Schema{
			"port":  port("The admin API's port (on the pod IP: probes and Prometheus connect there)."),
			"hosts": g.configKey("admin.hosts"),
			"token": obj("The approval API's bearer token.", Schema{
				"existingSecret": str("An existing Secret holding the token under key."),
				"key":            str("The key in the Secret."),
				"value":          str("The token itself (at least 16 characters), kept in a Secret the chart renders."),
			}),
		}),
		"ca": obj("The MITM CA.", Schema{
			"existingSecret": str("An existing kubernetes.io/tls Secret (tls.crt, tls.key) holding the CA."),
			"validityDays":   integer("Validity of a CA the chart generates (once; kept across upgrades and uninstall).", 1),
		}),
		"agent": obj("How the agent container is pointed at payguard.", Schema{
			"caEnv":       list("Environment variables set to the CA certificate's path in the agent.", Schema{"type": "string"}),
			"caMountPath": str("Where the CA certificate is mounted in the agent."),
			"noProxy":     str("NO_PROXY for the agent: these hosts bypass payguard."),
		}),
		"persistence": obj("State volume (ledger, holds, tickets, receipt keys, sanctions cache).", Schema{
			"enabled":       boolean("true (the default): a PersistentVolumeClaim for the bolt ledger; false: an emptyDir, which loses today's spend, holds and tickets with the pod. With store.driver redis: always an emptyDir."),
			"existingClaim": str("Use this claim instead of rendering one."),
			"size":          str("Claim size."),
			"storageClass":  str("Claim storage class."),
			"accessModes":   list("Claim access modes.", Schema{"type": "string"}),
		}),
		"store": obj("The ledger.", Schema{
			"driver": with(g.configKey("store.driver"), "enum", []any{"bolt", "redis"}),
			"redis": obj("Redis for a fleet.", Schema{
				"urlSecret":     str("A Secret holding redis://[:password@]host:port/db (required with driver redis)."),
				"urlKey":        str("The key in urlSecret."),
				"prefix":        g.configKey("store.redis.prefix"),
				"allowVolatile": g.configKey("store.redis.allow_volatile"),
				"initIfEmpty":   g.configKey("store.redis.init_if_empty"),
			}),
		}),
		"screening": obj("Sanctions list and domain lookups.", Schema{
			"sanctions": obj("The OFAC list.", Schema{
				"enabled":         g.configKey("screening.sanctions.enabled"),
				"sources":         g.configKey("screening.sanctions.sources"),
				"refreshInterval": g.configKey("screening.sanctions.refresh_interval"),
				"seedDir":         g.configKey("screening.sanctions.seed_dir"),
			}),
			"domain": obj("Domain lookups.", Schema{
				"enabled": g.configKey("screening.domain.enabled"),
			}),
		}),
		"receiptKeys": obj("Receipt signing keys.", Schema{
			"existingSecret": str("A Secret holding a key file from `payguard keys generate` (required when several replicas must sign with one key)."),
			"key":            str("The key in the Secret."),
		}),
		"rules":           rules,
		"securityContext": k8s("The payguard container's securityContext"),
		"nodeSelector":    podPlacement["nodeSelector"],
		"tolerations":     podPlacement["tolerations"],
		"affinity":        podPlacement["affinity"],
		"networkPolicy": obj("NetworkPolicies for the pods the chart renders.", Schema{
			"enabled":          boolean("Render the NetworkPolicies."),
			"adminFrom":        list("Peers (NetworkPolicyPeer) allowed to reach the admin port, e.g. the monitoring namespace. Empty: no pod may.", Schema{"type": "object"}),
			"agentPodSelector": with(openObj("matchLabels of the agent pods that use the proxy fleet; when set, those pods may send only to the fleet's proxy port and DNS."), "additionalProperties", Schema{"type": "string"}),
			"dnsNamespace":     str("Namespace of the cluster DNS that agent pods may query."),
		}),
		"serviceMonitor": obj("A Prometheus Operator ServiceMonitor for the admin and serve metrics.", Schema{
			"enabled":  boolean("Render the ServiceMonitor (needs the monitoring.coreos.com CRDs)."),
			"interval": str("Scrape interval."),
			"labels":   with(openObj("Extra labels (e.g. the Prometheus release's selector)."), "additionalProperties", Schema{"type": "string"}),
		}),
		"podDisruptionBudget": obj("A PodDisruptionBudget for each of proxyFleet and serve.", Schema{
			"enabled":        boolean("Render the PodDisruptionBudgets."),
			"maxUnavailable": integer("Pods of one Deployment a voluntary disruption may take at once.", 1),
		}),
		"topologySpread": obj("Topology spread constraints for the proxyFleet and serve pods.", Schema{
			"enabled": boolean("Add the constraints to the pod specs."),
			"constraints": list("Each gets the Deployment's own labelSelector.", obj("A constraint.", Schema{
				"topologyKey":       str("Node label to spread across, e.g. kubernetes.io/hostname or topology.kubernetes.io/zone."),
				"maxSkew":           integer("Largest allowed difference in pod count between two domains.", 1),
				"whenUnsatisfiable": enum("ScheduleAnyway (prefer) or DoNotSchedule (require).", "ScheduleAnyway", "DoNotSchedule"),
			})),
		}),
		"grafanaDashboard": obj("A Grafana dashboard in a ConfigMap for Grafana's dashboard sidecar.", Schema{
			"enabled":     boolean("Render the dashboard ConfigMap."),
			"labels":      with(openObj("Labels the Grafana sidecar selects dashboards by."), "additionalProperties", Schema{"type": "string"}),
			"annotations": with(openObj("Annotations, e.g. the sidecar's target folder."), "additionalProperties", Schema{"type": "string"}),
		}),
		"prometheusRule": obj("PrometheusRule alerts (Prometheus Operator CRD).", Schema{
			"enabled":           boolean("Render the PrometheusRule (needs the monitoring.coreos.com CRDs)."),
			"labels":            with(openObj("Extra labels (e.g. the Prometheus release's rule selector)."), "additionalProperties", Schema{"type": "string"}),
			"listStaleHours":    integer("Alert when the served OFAC list is older than this many hours.", 1),
			"storeDownFor":      with(str("Alert when the ledger has not answered for this long (a Prometheus duration)."), "pattern", promDuration),
			"holdsWaitingFor":   with(str("Alert when holds have waited for a person this long (a Prometheus duration)."), "pattern", promDuration),
			"spendNearCapRatio": Schema{"type": "number", "exclusiveMinimum": 0, "maximum": 1, "description": "Alert when today's spend plus reservations reach this fraction of rules.daily_cap_usd."},
		}),
		"proxyFleet": obj("Standalone mode: a Deployment of `payguard proxy` behind a Service, for agents in other pods (store.driver redis for one shared budget).", Schema{
			"enabled":        boolean("Render the proxy Deployment and Service."),
			"replicas":       integer("Replicas; more than one needs store.driver redis and receiptKeys.existingSecret.", 1),
			"resources":      resources,
			"podAnnotations": with(openObj("Pod annotations."), "additionalProperties", Schema{"type": "string"}),
			"serviceType":    enum("The proxy Service's type.", "ClusterIP", "NodePort", "LoadBalancer"),
		}),
		"serve": obj("`payguard serve`, the pay-per-call screening API, as a Deployment behind a Service.", Schema{
			"enabled":        boolean("Render the serve Deployment and Service."),
			"replicas":       integer("Replicas; more than one needs store.driver redis and receiptKeys.existingSecret.", 1),
			"port":           port("The API's port."),
			"metricsPort":    port("The metrics port (payguard_server_*)."),
			"resources":      resources,
			"podAnnotations": with(openObj("Pod annotations."), "additionalProperties", Schema{"type": "string"}),
			"serviceType":    enum("The serve Service's type.", "ClusterIP", "NodePort", "LoadBalancer"),
			"server":         server,
		}),
		"example": obj("An example Deployment: a placeholder agent with payguard as its sidecar.", Schema{
			"enabled":  boolean("Render the example Deployment."),
			"replicas": integer("Replicas; more than one needs store.driver redis.", 1),
			"agent": obj("The placeholder agent container.", Schema{
				"image":           str("Agent image."),
				"command":         list("Agent command.", Schema{"type": "string"}),
				"securityContext": k8s("The agent container's securityContext"),
				"resources":       resources,
			}),
			"podAnnotations": with(openObj("Pod annotations."), "additionalProperties", Schema{"type": "string"}),
		}),
	})
	root["$schema"] = "http://json-schema.org/draft-07/schema#"
	root["title"] = "payguard chart values (generated by go run ./internal/cmd/genschema: do not edit)"
	return root
}
