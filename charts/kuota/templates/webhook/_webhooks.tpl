{{/*
The webhooks of Kueue's own kinds and of the job frameworks kuota manages, with Kueue's paths, rules
and operations. A framework kuota does not manage has no webhook: kuota refuses to enable it.
jobType webhooks take the managed-jobs namespace selector; a webhook with a framework fails open
while that framework is not configured, as in Kueue's chart.
*/}}
{{- define "kuota.webhooks" -}}
- {kind: clusterqueue, group: kueue.x-k8s.io, version: v1beta2, resource: clusterqueues, mutate: [CREATE], validate: [CREATE, UPDATE]}
- {kind: cohort, group: kueue.x-k8s.io, version: v1beta2, resource: cohorts, mutate: [], validate: [CREATE, UPDATE]}
- {kind: resourceflavor, group: kueue.x-k8s.io, version: v1beta2, resource: resourceflavors, mutate: [CREATE], validate: [CREATE, UPDATE]}
- {kind: workload, group: kueue.x-k8s.io, version: v1beta2, resource: workloads, mutate: [CREATE], validate: [CREATE, UPDATE], validateStatus: true}
- {kind: job, group: batch, version: v1, resource: jobs, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true}
- {kind: pod, group: "", version: v1, resource: pods, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: pod}
- {kind: deployment, group: apps, version: v1, resource: deployments, mutate: [CREATE, UPDATE], validate: [CREATE, UPDATE], jobType: true, framework: deployment}
- {kind: statefulset, group: apps, version: v1, resource: statefulsets, mutate: [CREATE, UPDATE], validate: [CREATE, UPDATE], jobType: true, framework: statefulset}
- {kind: jobset, group: jobset.x-k8s.io, version: v1alpha2, resource: jobsets, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: jobset.x-k8s.io/jobset}
- {kind: pytorchjob, group: kubeflow.org, version: v1, resource: pytorchjobs, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: kubeflow.org/pytorchjob}
- {kind: tfjob, group: kubeflow.org, version: v1, resource: tfjobs, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: kubeflow.org/tfjob}
- {kind: xgboostjob, group: kubeflow.org, version: v1, resource: xgboostjobs, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: kubeflow.org/xgboostjob}
- {kind: paddlejob, group: kubeflow.org, version: v1, resource: paddlejobs, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: kubeflow.org/paddlejob}
- {kind: jaxjob, group: kubeflow.org, version: v1, resource: jaxjobs, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: kubeflow.org/jaxjob}
- {kind: mpijob, group: kubeflow.org, version: v2beta1, resource: mpijobs, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: kubeflow.org/mpijob}
- {kind: rayjob, group: ray.io, version: v1, resource: rayjobs, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: ray.io/rayjob}
- {kind: raycluster, group: ray.io, version: v1, resource: rayclusters, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: ray.io/raycluster}
- {kind: rayservice, group: ray.io, version: v1, resource: rayservices, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: ray.io/rayservice}
- {kind: appwrapper, group: workload.codeflare.dev, version: v1beta2, resource: appwrappers, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: workload.codeflare.dev/appwrapper}
- {kind: trainjob, group: trainer.kubeflow.org, version: v1alpha1, resource: trainjobs, mutate: [CREATE], validate: [CREATE, UPDATE], jobType: true, framework: trainer.kubeflow.org/trainjob}
- {kind: leaderworkerset, group: leaderworkerset.x-k8s.io, version: v1, resource: leaderworkersets, mutate: [CREATE, UPDATE], validate: [CREATE, UPDATE], jobType: true, framework: leaderworkerset.x-k8s.io/leaderworkerset}
{{- end }}

{{/*
One webhook entry. Arguments: root (the chart context), hook (one entry above), verb ("mutate" or
"validate").
*/}}
{{- define "kuota.webhook" -}}
{{- $root := .root }}
{{- $hook := .hook }}
{{- $config := include "kuota.config" $root | fromYaml }}
{{- $frameworks := dig "integrations" "frameworks" (list "batch/job") $config | default (list "batch/job") }}
- name: {{ printf "%s%s.kb.io" (substr 0 1 .verb) $hook.kind }}
  admissionReviewVersions:
    - v1
  clientConfig:
    service:
      name: {{ include "kuota.webhookServiceName" $root }}
      namespace: {{ $root.Release.Namespace | quote }}
      path: {{ printf "/%s-%s-%s-%s" .verb (replace "." "-" $hook.group) $hook.version $hook.kind }}
  {{- if and $hook.framework (not (has $hook.framework $frameworks)) }}
  failurePolicy: Ignore
  {{- else }}
  failurePolicy: Fail
  {{- end }}
  sideEffects: None
  {{- if eq .verb "mutate" }}
  reinvocationPolicy: {{ $root.Values.mutatingWebhook.reinvocationPolicy }}
  {{- end }}
  {{- if $hook.jobType }}
  namespaceSelector:
    {{- include "kuota.managedJobsNamespaceSelector" $root | trim | nindent 4 }}
  {{- end }}
  rules:
    - apiGroups:
        - {{ $hook.group | quote }}
      apiVersions:
        - {{ $hook.version }}
      operations:
        {{- toYaml (get $hook .verb) | nindent 8 }}
      resources:
        - {{ $hook.resource }}
        {{- if and (eq .verb "validate") $hook.validateStatus }}
        - {{ $hook.resource }}/status
        {{- end }}
{{- end }}

{{- define "kuota.webhookConfigurationMeta" -}}
labels:
  {{- include "kuota.labels" . | nindent 2 }}
{{- if .Values.enableCertManager }}
annotations:
  cert-manager.io/inject-ca-from: {{ printf "%s/%s" .Release.Namespace (include "kuota.servingCertName" .) }}
{{- end }}
{{- end }}
