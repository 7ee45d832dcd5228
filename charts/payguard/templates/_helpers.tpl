{{/*
Named templates. The ones meant for your own pod spec ("payguard.sidecar", "payguard.volumes",
"payguard.agentEnv", "payguard.agentVolumeMounts") take a context whose .Values are this chart's values and
.Release is the release: "." inside this chart, or
(dict "Values" .Values.payguard "Release" .Release "Capabilities" .Capabilities) from a parent chart that
depends on this one. They read nothing else (no .Chart), so both work. .Capabilities is needed only while
sidecar.native is auto (the cluster's version decides).
*/}}

{{- define "payguard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default "payguard" .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The standard labels, on every object the chart renders (these templates run inside the chart: .Chart is set). */}}
{{- define "payguard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ default "payguard" .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service | default "Helm" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: payguard
{{- end -}}

{{/*
payguard.keep: annotations for state that must outlive the release: `helm uninstall` leaves these objects in
place (agents keep trusting the CA; a reinstall finds the same CA and token through lookup).
*/}}
{{- define "payguard.keep" -}}
helm.sh/resource-policy: keep
{{- end -}}

{{/* payguard.image: repository:tag, or repository@digest when image.digest is set. */}}
{{- define "payguard.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository .Values.image.tag -}}
{{- end -}}
{{- end -}}

{{/*
payguard.sidecarIsNative: "true" when "payguard.sidecar" is a native sidecar (put it under initContainers),
"" when it is a regular container (put it under containers). sidecar.native auto decides by the cluster's
version: native sidecars are on by default from Kubernetes 1.29. Forcing true below 1.28 fails the render:
the API server would drop the field and the proxy would block the pod's start as an init container.
*/}}
{{- define "payguard.sidecarIsNative" -}}
{{- $native := .Values.sidecar.native -}}
{{- $kube := "" -}}
{{- if .Capabilities -}}{{- $kube = .Capabilities.KubeVersion.Version -}}{{- end -}}
{{- if eq (toString $native) "auto" -}}
{{- if not $kube -}}
{{- fail "sidecar.native auto needs the cluster version: pass \"Capabilities\" .Capabilities in the context, or set sidecar.native true or false" -}}
{{- end -}}
{{- if semverCompare ">=1.29.0-0" $kube -}}true{{- end -}}
{{- else if eq (toString $native) "true" -}}
{{- if and $kube (semverCompare "<1.28.0-0" $kube) -}}
{{- fail (printf "sidecar.native true needs Kubernetes >= 1.28 (this cluster is %s): use auto or false" $kube) -}}
{{- end -}}
true
{{- else if ne (toString $native) "false" -}}
{{- fail (printf "sidecar.native must be auto, true or false, not %v" $native) -}}
{{- end -}}
{{- end -}}

{{/* payguard.podPlacement: pull secrets, node selector, tolerations and affinity for the chart's own pods. */}}
{{- define "payguard.podPlacement" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
payguard.requireShared: several replicas must share one ledger and one receipt key, or each would keep its
own daily cap and sign with its own key. Call with (dict "ctx" . "what" "proxyFleet" "replicas" N).
*/}}
{{- define "payguard.requireShared" -}}
{{- if gt (int .replicas) 1 -}}
{{- if ne .ctx.Values.store.driver "redis" -}}
{{- fail (printf "%s.replicas > 1 with store.driver %s would give every pod its own ledger: use store.driver redis" .what .ctx.Values.store.driver) -}}
{{- end -}}
{{- if not .ctx.Values.receiptKeys.existingSecret -}}
{{- fail (printf "%s.replicas > 1 needs receiptKeys.existingSecret: every replica must sign receipts with the one published key" .what) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "payguard.selectorLabels" -}}
app.kubernetes.io/name: {{ default "payguard" .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "payguard.adminTokenSecret" -}}
{{- .Values.admin.token.existingSecret | default (printf "%s-admin" (include "payguard.fullname" .)) -}}
{{- end -}}

{{- define "payguard.caSecret" -}}
{{- .Values.ca.existingSecret | default (printf "%s-ca" (include "payguard.fullname" .)) -}}
{{- end -}}

{{/*
payguard.persistent: "true" when the data volume is the PersistentVolumeClaim: persistence.enabled with the
bolt ledger. A Redis ledger keeps nothing in the data volume that must outlive the pod (the sanctions cache
is downloaded again, the image's snapshot serving meanwhile), and several replicas cannot share one
ReadWriteOnce claim, so it gets an emptyDir.
*/}}
{{- define "payguard.persistent" -}}
{{- if and .Values.persistence.enabled (eq .Values.store.driver "bolt") -}}true{{- end -}}
{{- end -}}

{{- define "payguard.dataClaim" -}}
{{- .Values.persistence.existingClaim | default (printf "%s-data" (include "payguard.fullname" .)) -}}
{{- end -}}

{{/* Paths inside the payguard container. */}}
{{- define "payguard.paths.config" -}}/etc/payguard/config{{- end -}}
{{- define "payguard.paths.ca" -}}/etc/payguard/ca{{- end -}}
{{- define "payguard.paths.admin" -}}/etc/payguard/admin{{- end -}}
{{- define "payguard.paths.keys" -}}/etc/payguard/receipt-keys{{- end -}}
{{- define "payguard.paths.data" -}}/data{{- end -}}

{{/*
payguard.config: the proxy's YAML configuration (the ConfigMap's payguard.yaml). payguard rejects unknown
keys, so what is written here is exactly what `payguard config validate` accepts.
*/}}
{{- define "payguard.config" -}}
{{- include "payguard.configFor" (dict "ctx" . "proxyHost" "127.0.0.1") -}}
{{- end -}}

{{/* payguard.fleetConfig: the same for the proxy fleet, which agents in other pods reach on the pod IP. */}}
{{- define "payguard.fleetConfig" -}}
{{- include "payguard.configFor" (dict "ctx" . "proxyHost" "0.0.0.0") -}}
{{- end -}}

{{- define "payguard.configFor" -}}
{{- $data := include "payguard.paths.data" .ctx -}}
{{- $proxyHost := .proxyHost -}}
{{- with .ctx -}}
data_dir: {{ $data | quote }}
proxy:
  listen: {{ printf "%s:%v" $proxyHost .Values.proxy.port | quote }}
  ca_cert_file: {{ printf "%s/tls.crt" (include "payguard.paths.ca" .) | quote }}
  ca_key_file: {{ printf "%s/tls.key" (include "payguard.paths.ca" .) | quote }}
  tunnel_hosts: {{ .Values.proxy.tunnelHosts | toJson }}
  upstream_ca_files: {{ .Values.proxy.upstreamCAFiles | toJson }}
  hold_wait: {{ .Values.proxy.holdWait | quote }}
  hold_ttl: {{ .Values.proxy.holdTTL | quote }}
  cert_cache_size: {{ .Values.proxy.certCacheSize | int }}
  max_idle_conns_per_host: {{ .Values.proxy.maxIdleConnsPerHost | int }}
  budget: {{ .Values.proxy.budget | quote }}
admin:
  listen: {{ printf "0.0.0.0:%v" .Values.admin.port | quote }}
  token_file: {{ printf "%s/%s" (include "payguard.paths.admin" .) .Values.admin.token.key | quote }}
  hosts: {{ .Values.admin.hosts | default list | toJson }}
{{ include "payguard.configTail" . }}
{{- end -}}
{{- end -}}

{{/* payguard.configTail: the sections the proxy and serve share (store, screening, keys, rules). */}}
{{- define "payguard.configTail" -}}
{{- $data := include "payguard.paths.data" . -}}
store:
{{- if eq .Values.store.driver "redis" }}
  driver: redis
  redis:
    url_env: PAYGUARD_REDIS_URL
    prefix: {{ .Values.store.redis.prefix | quote }}
    allow_volatile: {{ .Values.store.redis.allowVolatile | default false }}
    init_if_empty: {{ .Values.store.redis.initIfEmpty | default false }}
{{- else if eq .Values.store.driver "bolt" }}
  driver: bolt
  path: {{ printf "%s/payguard.db" $data | quote }}
{{- else }}
{{- fail (printf "store.driver must be bolt or redis, not %q" .Values.store.driver) }}
{{- end }}
screening:
  sanctions:
    enabled: {{ .Values.screening.sanctions.enabled }}
{{- with .Values.screening.sanctions.sources }}
    sources: {{ . | toJson }}
{{- end }}
    refresh_interval: {{ .Values.screening.sanctions.refreshInterval | quote }}
    cache_dir: {{ printf "%s/sanctions" $data | quote }}
    seed_dir: {{ .Values.screening.sanctions.seedDir | default "" | quote }}
  domain:
    enabled: {{ .Values.screening.domain.enabled }}
keys:
{{- if .Values.receiptKeys.existingSecret }}
  receipt_key_file: {{ printf "%s/%s" (include "payguard.paths.keys" .) .Values.receiptKeys.key | quote }}
{{- else }}
  receipt_key_file: {{ printf "%s/receipt-keys.json" $data | quote }}
{{- end }}
{{- /*
The rules, one per line. The schema allows a string only where it is a decimal number (helm --set passes
0.25 as text), and payguard reads amounts only from YAML numbers: strings are written unquoted.
*/}}
rules:
{{- range $name, $value := .Values.rules }}
  {{ $name }}: {{ ternary $value (toJson $value) (kindIs "string" $value) }}
{{- end }}
{{- end -}}

{{/* payguard.serveConfig: payguard.yaml for `payguard serve`. */}}
{{- define "payguard.serveConfig" -}}
{{- $server := deepCopy .Values.serve.server -}}
{{- $_ := set $server "listen" (printf "0.0.0.0:%v" .Values.serve.port) -}}
{{- $_ := set $server "metrics_listen" (printf "0.0.0.0:%v" .Values.serve.metricsPort) -}}
server:
{{- toYaml $server | nindent 2 }}
{{ include "payguard.configTail" . }}
{{- end -}}

{{/*
payguard.sidecar: the payguard container, as one list item. When "payguard.sidecarIsNative" says "true", put
it under initContainers (it carries restartPolicy: Always); otherwise under containers.
*/}}
{{- define "payguard.sidecar" -}}
- name: payguard
  image: {{ include "payguard.image" . | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
{{- if and (not .fleet) (include "payguard.sidecarIsNative" .) }}
  restartPolicy: Always
{{- end }}
  args:
    - proxy
    - --config
    - {{ printf "%s/payguard.yaml" (include "payguard.paths.config" .) }}
{{- range .Values.sidecar.extraArgs }}
    - {{ . | quote }}
{{- end }}
  ports:
{{- if .fleet }}
    - name: payguard-proxy
      containerPort: {{ .Values.proxy.port }}
      protocol: TCP
{{- end }}
    - name: payguard-admin
      containerPort: {{ .Values.admin.port }}
      protocol: TCP
{{- if or (eq .Values.store.driver "redis") .Values.sidecar.extraEnv }}
  env:
{{- if eq .Values.store.driver "redis" }}
    - name: PAYGUARD_REDIS_URL
      valueFrom:
        secretKeyRef:
          name: {{ required "store.redis.urlSecret is required with store.driver redis" .Values.store.redis.urlSecret }}
          key: {{ .Values.store.redis.urlKey }}
{{- end }}
{{- with .Values.sidecar.extraEnv }}
{{- toYaml . | nindent 4 }}
{{- end }}
{{- end }}
  # Startup asks only whether the process answers: a native sidecar's agent starts once it passes. Readiness
  # (/readyz) needs a sanctions list, which the image's snapshot (screening.sanctions.seedDir) gives at once,
  # so a slow OFAC download does not keep the agent's pod NotReady; the download then replaces it.
  startupProbe:
    httpGet: {path: /healthz, port: payguard-admin}
    periodSeconds: 1
    failureThreshold: 60
  livenessProbe:
    httpGet: {path: /healthz, port: payguard-admin}
    periodSeconds: 10
    failureThreshold: 3
  readinessProbe:
    # 503 until a sanctions list is loaded (with screen_sanctions on every payment is held until then).
    httpGet: {path: /readyz, port: payguard-admin}
    periodSeconds: 5
    failureThreshold: 2
  resources:
{{- toYaml (ternary .Values.proxyFleet.resources .Values.sidecar.resources (not (not .fleet))) | nindent 4 }}
  securityContext:
{{- toYaml .Values.securityContext | nindent 4 }}
  volumeMounts:
    - name: payguard-config
      mountPath: {{ include "payguard.paths.config" . }}
      readOnly: true
    - name: payguard-ca
      mountPath: {{ include "payguard.paths.ca" . }}
      readOnly: true
    - name: payguard-admin-token
      mountPath: {{ include "payguard.paths.admin" . }}
      readOnly: true
    - name: payguard-data
      mountPath: {{ include "payguard.paths.data" . }}
{{- if .Values.receiptKeys.existingSecret }}
    - name: payguard-receipt-keys
      mountPath: {{ include "payguard.paths.keys" . }}
      readOnly: true
{{- end }}
{{- with .Values.sidecar.extraVolumeMounts }}
{{- toYaml . | nindent 4 }}
{{- end }}
{{- end -}}

{{/*
payguard.volumes: the pod volumes the sidecar and the agent mount, as list items under spec.volumes. The
agent's "payguard-ca-cert" holds only the CA certificate; the key, the admin token and the ledger are mounted
into the payguard container alone, so the agent can neither approve its own holds nor mint certificates.
*/}}
{{- define "payguard.volumes" -}}
- name: payguard-config
  configMap:
    name: {{ include "payguard.fullname" . }}{{ if .fleet }}-fleet{{ end }}
- name: payguard-ca
  secret:
    secretName: {{ include "payguard.caSecret" . }}
    defaultMode: 0440
    items:
      - {key: tls.crt, path: tls.crt}
      - {key: tls.key, path: tls.key}
- name: payguard-ca-cert
  secret:
    secretName: {{ include "payguard.caSecret" . }}
    defaultMode: 0444
    items:
      - {key: tls.crt, path: payguard-ca.pem}
- name: payguard-admin-token
  secret:
    secretName: {{ include "payguard.adminTokenSecret" . }}
    defaultMode: 0440
    items:
      - {key: {{ .Values.admin.token.key }}, path: {{ .Values.admin.token.key }}}
{{- if .Values.receiptKeys.existingSecret }}
- name: payguard-receipt-keys
  secret:
    secretName: {{ .Values.receiptKeys.existingSecret }}
    defaultMode: 0440
    items:
      - {key: {{ .Values.receiptKeys.key }}, path: {{ .Values.receiptKeys.key }}}
{{- end }}
- name: payguard-data
{{- if include "payguard.persistent" . }}
  persistentVolumeClaim:
    claimName: {{ include "payguard.dataClaim" . }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- with .Values.sidecar.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* payguard.agentEnv: env list items for the agent container: the proxy and the CA trust variables. */}}
{{- define "payguard.agentEnv" -}}
{{- $proxy := printf "http://127.0.0.1:%v" .Values.proxy.port -}}
{{- $ca := printf "%s/payguard-ca.pem" .Values.agent.caMountPath -}}
{{- $env := list -}}
{{- range $name := list "HTTP_PROXY" "HTTPS_PROXY" "http_proxy" "https_proxy" -}}
{{- $env = append $env (dict "name" $name "value" $proxy) -}}
{{- end -}}
{{- range $name := list "NO_PROXY" "no_proxy" -}}
{{- $env = append $env (dict "name" $name "value" $.Values.agent.noProxy) -}}
{{- end -}}
{{- range $name := .Values.agent.caEnv -}}
{{- $env = append $env (dict "name" $name "value" $ca) -}}
{{- end -}}
{{- toYaml $env -}}
{{- end -}}

{{/* payguard.agentVolumeMounts: the CA certificate (only) for the agent container. */}}
{{- define "payguard.agentVolumeMounts" -}}
- name: payguard-ca-cert
  mountPath: {{ .Values.agent.caMountPath }}
  readOnly: true
{{- end -}}

{{/*
payguard.podSecurityContext: what the pod needs for the sidecar: fsGroup 65532 lets the non-root payguard
user read its secret files (mode 0440) and write a PersistentVolumeClaim.
*/}}
{{- define "payguard.podSecurityContext" -}}
fsGroup: {{ .Values.securityContext.runAsGroup | default 65532 }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
payguard.topologySpread: the pod spec's topologySpreadConstraints for one component's Deployment ("proxy"
or "serve"), each constraint selecting that Deployment's own pods. Call with (dict "ctx" . "component" C).
*/}}
{{- define "payguard.topologySpread" -}}
{{- if and .ctx.Values.topologySpread.enabled .ctx.Values.topologySpread.constraints }}
topologySpreadConstraints:
{{- range .ctx.Values.topologySpread.constraints }}
  - topologyKey: {{ .topologyKey }}
    maxSkew: {{ .maxSkew | default 1 }}
    whenUnsatisfiable: {{ .whenUnsatisfiable | default "ScheduleAnyway" }}
    labelSelector:
      matchLabels:
        {{- include "payguard.selectorLabels" $.ctx | nindent 8 }}
        app.kubernetes.io/component: {{ $.component }}
{{- end }}
{{- end }}
{{- end -}}
