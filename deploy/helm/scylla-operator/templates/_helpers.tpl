{{/*
scylla-operator.image is the image every program runs.
*/}}
{{- define "scylla-operator.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{/*
scylla-operator.imagePullPolicy renders the container's imagePullPolicy when values set one.
*/}}
{{- define "scylla-operator.imagePullPolicy" -}}
{{- with .Values.image.pullPolicy -}}
imagePullPolicy: {{ . }}
{{- end -}}
{{- end -}}

{{/*
scylla-operator.podSecurityContext is the security context of every pod: a non-root user and group, the runtime's
default seccomp profile.
*/}}
{{- define "scylla-operator.podSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{/*
scylla-operator.containerSecurityContext is the security context of every container: non-root, a read-only root
filesystem, no privilege escalation, no capabilities, the runtime's default seccomp profile.
*/}}
{{- define "scylla-operator.containerSecurityContext" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  runAsNonRoot: true
  capabilities:
    drop: ["ALL"]
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{/*
scylla-operator.spreadAcrossNodes prefers to schedule the replicas of the pods labelled app.kubernetes.io/name=<name>
on different nodes, so that one node going down leaves one serving.
*/}}
{{- define "scylla-operator.spreadAcrossNodes" -}}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            app.kubernetes.io/name: {{ . }}
{{- end -}}

{{/*
scylla-operator.managerURL is the manager-controller's --scylladb-manager-url: the one values give, or the Service of
the ScyllaDB Manager the chart deploys.
*/}}
{{- define "scylla-operator.managerURL" -}}
{{- if .Values.managerController.scyllaDBManagerURL -}}
{{ .Values.managerController.scyllaDBManagerURL }}
{{- else if .Values.scyllaDBManager.enabled -}}
http://scylla-manager.{{ .Values.managerController.namespace }}.svc/api/v1
{{- else -}}
{{- fail "managerController.scyllaDBManagerURL must name the ScyllaDB Manager API when scyllaDBManager.enabled is false" -}}
{{- end -}}
{{- end -}}
