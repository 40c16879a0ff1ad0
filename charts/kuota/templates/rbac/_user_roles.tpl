{{/*
The user-facing roles Kueue ships, aggregated into batch-admin and batch-user and into Kubernetes'
view/edit/admin roles. Each entry: role (name), group, resources (status: whether the resource has
a status subresource), and aggregate, the labels it carries: admin = batch-admin, user =
batch-user, view/edit/adm = rbac.authorization.k8s.io/aggregate-to-view/edit/admin.
*/}}
{{- define "kuota.userRoles" -}}
- {role: clusterqueue-editor, group: kueue.x-k8s.io, resource: clusterqueues, status: true, editor: true, aggregate: [admin]}
- {role: clusterqueue-viewer, group: kueue.x-k8s.io, resource: clusterqueues, status: true, aggregate: [admin, adm]}
- {role: cohort-editor, group: kueue.x-k8s.io, resource: cohorts, status: true, editor: true, aggregate: [admin]}
- {role: cohort-viewer, group: kueue.x-k8s.io, resource: cohorts, status: true, aggregate: [admin, adm]}
- {role: resourceflavor-editor, group: kueue.x-k8s.io, resource: resourceflavors, editor: true, aggregate: [admin]}
- {role: resourceflavor-viewer, group: kueue.x-k8s.io, resource: resourceflavors, aggregate: [admin, adm]}
- {role: topology-editor, group: kueue.x-k8s.io, resource: topologies, editor: true, aggregate: [admin]}
- {role: topology-viewer, group: kueue.x-k8s.io, resource: topologies, aggregate: [admin, adm]}
- {role: localqueue-editor, group: kueue.x-k8s.io, resource: localqueues, status: true, editor: true, aggregate: [admin]}
- {role: localqueue-viewer, group: kueue.x-k8s.io, resource: localqueues, status: true, aggregate: [admin, user, view, edit, adm]}
- {role: workload-editor, group: kueue.x-k8s.io, resource: workloads, status: true, editor: true, aggregate: [admin]}
- {role: workload-viewer, group: kueue.x-k8s.io, resource: workloads, status: true, aggregate: [admin, user, view, edit, adm]}
- {role: pending-workloads-cq-viewer, group: visibility.kueue.x-k8s.io, resource: clusterqueues/pendingworkloads, aggregate: [admin, view, edit, adm]}
- {role: pending-workloads-lq-viewer, group: visibility.kueue.x-k8s.io, resource: localqueues/pendingworkloads, aggregate: [admin, user, view, edit, adm]}
{{- range $job := list
      (list "job" "batch" "jobs")
      (list "jobset" "jobset.x-k8s.io" "jobsets")
      (list "mpijob" "kubeflow.org" "mpijobs")
      (list "pytorchjob" "kubeflow.org" "pytorchjobs")
      (list "tfjob" "kubeflow.org" "tfjobs")
      (list "xgboostjob" "kubeflow.org" "xgboostjobs")
      (list "paddlejob" "kubeflow.org" "paddlejobs")
      (list "jaxjob" "kubeflow.org" "jaxjobs")
      (list "trainjob" "trainer.kubeflow.org" "trainjobs")
      (list "rayjob" "ray.io" "rayjobs")
      (list "rayservice" "ray.io" "rayservices")
      (list "raycluster" "ray.io" "rayclusters")
      (list "leaderworkerset" "leaderworkerset.x-k8s.io" "leaderworkersets")
      (list "sparkapplication" "sparkoperator.k8s.io" "sparkapplications") }}
{{- $name := index $job 0 }}
- {role: {{ $name }}-editor, group: {{ index $job 1 }}, resource: {{ index $job 2 }}, status: true, editor: true, aggregate: [admin, user]}
{{- /* Kueue leaves the Ray cluster and service viewers out of batch-user. */}}
{{- if has $name (list "rayservice" "raycluster") }}
- {role: {{ $name }}-viewer, group: {{ index $job 1 }}, resource: {{ index $job 2 }}, status: true, aggregate: [admin, view, edit, adm]}
{{- else }}
- {role: {{ $name }}-viewer, group: {{ index $job 1 }}, resource: {{ index $job 2 }}, status: true, aggregate: [admin, user, view, edit, adm]}
{{- end }}
{{- end }}
{{- end }}

{{- define "kuota.aggregateLabel" -}}
{{- $labels := dict
      "admin" "rbac.kueue.x-k8s.io/batch-admin"
      "user" "rbac.kueue.x-k8s.io/batch-user"
      "view" "rbac.authorization.k8s.io/aggregate-to-view"
      "edit" "rbac.authorization.k8s.io/aggregate-to-edit"
      "adm" "rbac.authorization.k8s.io/aggregate-to-admin" }}
{{- get $labels . }}
{{- end }}
