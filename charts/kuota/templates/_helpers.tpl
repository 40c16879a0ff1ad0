{{/*
The chart's name.
*/}}
{{- define "kuota.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object's name: fullnameOverride, else the release name when it already says
"kuota" or "kueue" (so release "kueue" keeps Kueue's object names), else "<release>-kuota".
*/}}
{{- define "kuota.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if or (contains $name .Release.Name) (contains "kueue" .Release.Name) }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kuota.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kuota.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kuota.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: controller-manager
{{- end }}

{{- define "kuota.labels" -}}
helm.sh/chart: {{ include "kuota.chart" . }}
{{ include "kuota.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Names shared by several templates.
*/}}
{{- define "kuota.serviceAccountName" -}}
{{- include "kuota.fullname" . }}-controller-manager
{{- end }}

{{- define "kuota.webhookServiceName" -}}
{{- include "kuota.fullname" . }}-webhook-service
{{- end }}

{{- define "kuota.webhookSecretName" -}}
{{- include "kuota.fullname" . }}-webhook-server-cert
{{- end }}

{{- define "kuota.visibilityServiceName" -}}
{{- include "kuota.fullname" . }}-visibility-server
{{- end }}

{{- define "kuota.metricsServiceName" -}}
{{- include "kuota.fullname" . }}-controller-manager-metrics-service
{{- end }}

{{- define "kuota.servingCertName" -}}
{{- include "kuota.fullname" . }}-serving-cert
{{- end }}

{{/*
The configuration file the controller reads: managerConfig.controllerManagerConfigYaml with the
release's namespace and, unless the file says otherwise, internal certificate management under
this release's Service and Secret names. Kueue's manager falls back to "kueue-webhook-service" and
"kueue-webhook-server-cert" when the names are missing, which crash-loops any release whose objects
are not named "kueue-*", so names given in the file must be this release's.
*/}}
{{- define "kuota.config" -}}
{{- $config := .Values.managerConfig.controllerManagerConfigYaml | fromYaml }}
{{- if hasKey $config "Error" }}
{{- fail (printf "managerConfig.controllerManagerConfigYaml is not a YAML mapping: %s" $config.Error) }}
{{- end }}
{{- if not (hasKey $config "namespace") }}
{{- $_ := set $config "namespace" .Release.Namespace }}
{{- end }}
{{- $service := include "kuota.webhookServiceName" . }}
{{- $secret := include "kuota.webhookSecretName" . }}
{{- $certs := dict }}
{{- if hasKey $config "internalCertManagement" }}
{{- $certs = $config.internalCertManagement | default dict }}
{{- end }}
{{- if .Values.enableCertManager }}
{{- if $certs.enable }}
{{- fail "enableCertManager: true needs internalCertManagement.enable: false (or no internalCertManagement) in managerConfig.controllerManagerConfigYaml" }}
{{- end }}
{{- $_ := set $certs "enable" false }}
{{- else if or (not (hasKey $certs "enable")) $certs.enable }}
{{- $_ := set $certs "enable" true }}
{{- end }}
{{- /* The names also tell the controller, with cert-manager, which Service the converted CRDs
and the visibility APIServices reach. */}}
{{- if or $certs.enable .Values.enableCertManager }}
{{- range $key, $want := dict "webhookServiceName" $service "webhookSecretName" $secret }}
{{- if and (hasKey $certs $key) (ne (get $certs $key) $want) }}
{{- fail (printf "internalCertManagement.%s is %q, but this release's is %q (remove it; the chart fills it in)" $key (get $certs $key) $want) }}
{{- end }}
{{- $_ := set $certs $key $want }}
{{- end }}
{{- end }}
{{- $_ := set $config "internalCertManagement" $certs }}
{{- if and .Values.controllerManager.featureGates (hasKey $config "featureGates") }}
{{- fail "controllerManager.featureGates and the configuration's featureGates cannot both be set (Kueue refuses --feature-gates together with featureGates)" }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{/*
Whether the controller manages the webhook certificate itself ("true" or empty).
*/}}
{{- define "kuota.internalCert" -}}
{{- $config := include "kuota.config" . | fromYaml }}
{{- if $config.internalCertManagement.enable }}true{{ end }}
{{- end }}

{{/*
The port of a Kueue bind address (":8081", "0.0.0.0:8081", "[::]:8081"); empty when the address
turns the server off ("0" or "").
*/}}
{{- define "kuota.bindPort" -}}
{{- $addr := toString . }}
{{- if and (ne $addr "") (ne $addr "0") }}
{{- regexReplaceAll "^.*:" $addr "" }}
{{- end }}
{{- end }}

{{/*
Ports and probe paths as the configuration sets them, with Kueue's defaults.
*/}}
{{- define "kuota.healthPort" -}}
{{- $config := include "kuota.config" . | fromYaml }}
{{- include "kuota.bindPort" (dig "health" "healthProbeBindAddress" ":8081" $config) }}
{{- end }}

{{- define "kuota.metricsPort" -}}
{{- $config := include "kuota.config" . | fromYaml }}
{{- include "kuota.bindPort" (dig "metrics" "bindAddress" ":8443" $config) }}
{{- end }}

{{- define "kuota.webhookPort" -}}
{{- $config := include "kuota.config" . | fromYaml }}
{{- $port := int (dig "webhook" "port" 9443 $config) }}
{{- if le $port 0 }}9443{{ else }}{{ $port }}{{ end }}
{{- end }}

{{/*
Whether the visibility API is served ("true" or empty): gate VisibilityOnDemand, on unless
controllerManager.featureGates or the configuration's featureGates turn it off.
*/}}
{{- define "kuota.visibility" -}}
{{- $config := include "kuota.config" . | fromYaml }}
{{- $on := dig "featureGates" "VisibilityOnDemand" true $config }}
{{- range .Values.controllerManager.featureGates }}
{{- if eq .name "VisibilityOnDemand" }}{{ $on = .enabled }}{{ end }}
{{- end }}
{{- if $on }}true{{ end }}
{{- end }}

{{- define "kuota.visibilityPort" -}}
{{- $config := include "kuota.config" . | fromYaml }}
{{- dig "visibilityServer" "bindPort" 8082 $config }}
{{- end }}

{{- define "kuota.certDir" -}}
{{- $config := include "kuota.config" . | fromYaml }}
{{- dig "webhook" "certDir" "/tmp/k8s-webhook-server/serving-certs" $config }}
{{- end }}

{{- define "kuota.probePath" -}}
{{- printf "/%s" (trimPrefix "/" .) }}
{{- end }}

{{/*
RUST_LOG from controllerManager.manager.logLevel: Kueue's zap level as a number, or a filter.
*/}}
{{- define "kuota.logFilter" -}}
{{- $level := .Values.controllerManager.manager.logLevel }}
{{- if kindIs "string" $level }}
{{- $level }}
{{- else if le (int $level) 2 }}info
{{- else if le (int $level) 4 }}debug
{{- else }}trace
{{- end }}
{{- end }}

{{/*
The job-type webhooks' namespaceSelector: the configuration's managedJobsNamespaceSelector, else
every namespace but kube-system and the release's.
*/}}
{{- define "kuota.managedJobsNamespaceSelector" -}}
{{- $config := include "kuota.config" . | fromYaml }}
{{- if hasKey $config "managedJobsNamespaceSelector" }}
{{- toYaml $config.managedJobsNamespaceSelector }}
{{- else }}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values:
      - kube-system
      - {{ .Release.Namespace | quote }}
{{- end }}
{{- end }}

{{/*
Refuses names Kubernetes would reject: Services are DNS-1035 labels (63 characters at most).
*/}}
{{- define "kuota.validateNames" -}}
{{- range $name := list (include "kuota.webhookServiceName" .) (include "kuota.metricsServiceName" .) }}
{{- if gt (len $name) 63 }}
{{- fail (printf "Service name %q is longer than 63 characters; set fullnameOverride to something shorter" $name) }}
{{- end }}
{{- end }}
{{- end }}
