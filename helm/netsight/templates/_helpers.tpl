{{/* Names and labels shared by every object of the chart. */}}

{{- define "netsight.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: <release>-netsight, or the release name when it already says netsight. */}}
{{- define "netsight.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "netsight.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "netsight.selectorLabels" -}}
app.kubernetes.io/name: {{ include "netsight.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "netsight.labels" -}}
helm.sh/chart: {{ include "netsight.chart" . }}
{{ include "netsight.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: netsight
{{- end }}

{{- define "netsight.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "netsight.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "netsight.image" -}}
{{- if eq .Values.image.tag "latest" }}
{{- fail "image.tag=latest: pin a version (or image.digest) so that every replica and every rollback runs the same netsight" }}
{{- end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Whether netsight checks callers' tokens, and so needs TokenReview and SubjectAccessReview. */}}
{{- define "netsight.authenticates" -}}
{{- if ne .Values.auth.mode "none" }}true{{ end }}
{{- end }}

{{/*
The API groups and resources netsight lists and watches: CORE_KINDS and PROVIDER_GROUPS of
netsight/graph/ingest/informers.py (tests/deploy checks the two agree). Providers that watch every kind
of their group are listed by resource all the same: RBAC here never uses wildcards.
*/}}
{{/*
PROVIDER_STATUS (config.providerStatus): the namespaces whose Deployments and DaemonSets
netsight watches (netsight/graph/ingest/discovery.py's PROVIDER_NAMESPACES), and the
cluster-scoped reads it adds.
*/}}
{{- define "netsight.providerNamespaces" -}}
[kube-system, kube-flannel, calico-system, tigera-operator, istio-system, linkerd, kgateway-system, envoy-gateway-system, cilium, ovn-kubernetes, kuma-system]
{{- end }}
{{- define "netsight.providerClusterResources" -}}
- apiGroups: [""]
  resources: [nodes]
- apiGroups: [admissionregistration.k8s.io]
  resources: [mutatingwebhookconfigurations]
{{- end }}
{{- define "netsight.providerWorkloads" -}}
- apiGroups: [apps]
  resources: [deployments, daemonsets]
{{- end }}

{{- define "netsight.watchedResources" -}}
- apiGroups: [""]
  resources: [namespaces, pods, services]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies, ingresses, ingressclasses]
# CRDs come and go with providers; netsight watches them to add and drop tools.
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
# Events about networking objects: the recent Warnings diagnose_service and recent_events show.
- apiGroups: [events.k8s.io]
  resources: [events]
{{- if .Values.config.secretMetadata }}
# Names only (netsight asks for PartialObjectMetadata), but RBAC cannot grant less than
# list/watch, which would also read Secret data: hence off by default.
- apiGroups: [""]
  resources: [secrets, configmaps]
{{- end }}
{{- with .Values.features }}
{{- if .gatewayAPI }}
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses, gateways, listenersets, httproutes, grpcroutes, tlsroutes,
              tcproutes, udproutes, referencegrants, backendtlspolicies]
- apiGroups: [gateway.networking.x-k8s.io]
  resources: [xlistenersets, xbackendtrafficpolicies, xmeshes]
{{- end }}
{{- if .networkPolicyAPI }}
- apiGroups: [policy.networking.k8s.io]
  resources: [adminnetworkpolicies, baselineadminnetworkpolicies, clusternetworkpolicies]
{{- end }}
{{- if .istio }}
- apiGroups: [networking.istio.io]
  resources: [virtualservices, destinationrules, gateways, serviceentries, sidecars,
              workloadentries, workloadgroups, envoyfilters]
- apiGroups: [security.istio.io]
  resources: [authorizationpolicies, peerauthentications, requestauthentications]
- apiGroups: [telemetry.istio.io]
  resources: [telemetries]
- apiGroups: [extensions.istio.io]
  resources: [wasmplugins]
{{- end }}
{{- if .cilium }}
- apiGroups: [cilium.io]
  resources: [ciliumnetworkpolicies, ciliumclusterwidenetworkpolicies, ciliumcidrgroups]
{{- end }}
{{- if .calico }}
- apiGroups: [crd.projectcalico.org]
  resources: [networkpolicies, globalnetworkpolicies, networksets, globalnetworksets, tiers]
{{- end }}
{{- if .linkerd }}
- apiGroups: [policy.linkerd.io]
  resources: [servers, serverauthorizations, authorizationpolicies, meshtlsauthentications,
              networkauthentications, httproutes]
- apiGroups: [linkerd.io]
  resources: [serviceprofiles]
{{- end }}
{{- if .kuma }}
- apiGroups: [kuma.io]
  resources: [meshes, meshtrafficpermissions, meshhttproutes, meshtcproutes, meshservices,
              trafficpermissions, trafficroutes]
{{- end }}
{{- if .kgateway }}
- apiGroups: [gateway.kgateway.dev]
  resources: [gatewayparameters, gatewayextensions, trafficpolicies, httplistenerpolicies,
              listenerpolicies, backendconfigpolicies, backends, directresponses]
{{- end }}
{{- if .envoyGateway }}
- apiGroups: [gateway.envoyproxy.io]
  resources: [clienttrafficpolicies, backendtrafficpolicies, securitypolicies,
              envoyextensionpolicies, backends]
{{- end }}
{{- end }}
{{- end }}

{{/*
The cluster-scoped resources among netsight.watchedResources, by API group, each with the
rbac.clusterReads switch that grants it when netsight watches chosen namespaces
(config.namespaces); every other watched resource is namespaced, read through the Roles.
*/}}
{{- define "netsight.clusterScoped" -}}
"": {namespaces: namespaces}
networking.k8s.io: {ingressclasses: classes}
apiextensions.k8s.io: {customresourcedefinitions: crds}
gateway.networking.k8s.io: {gatewayclasses: classes}
gateway.networking.x-k8s.io: {xmeshes: classes}
policy.networking.k8s.io: {adminnetworkpolicies: policies, baselineadminnetworkpolicies: policies, clusternetworkpolicies: policies}
cilium.io: {ciliumclusterwidenetworkpolicies: policies, ciliumcidrgroups: policies}
crd.projectcalico.org: {globalnetworkpolicies: policies, globalnetworksets: policies, tiers: policies}
kuma.io: {meshes: policies, trafficpermissions: policies, trafficroutes: policies}
{{- end }}

{{/*
netsight.watchedResources split for config.namespaces: (dict "root" . "scope" "namespaced")
the namespaced ones (the Roles' rules), "cluster" the cluster-scoped ones rbac.clusterReads
turns on (the ClusterRole's).
*/}}
{{- define "netsight.scopedResources" -}}
{{- $clusterScoped := include "netsight.clusterScoped" .root | fromYaml }}
{{- $reads := .root.Values.rbac.clusterReads | default dict }}
{{- $scope := .scope }}
{{- range (include "netsight.watchedResources" .root | fromYamlArray) }}
{{- $kinds := get $clusterScoped (index .apiGroups 0) | default dict }}
{{- $picked := list }}
{{- range .resources }}
{{- $switch := get $kinds . }}
{{- if and (eq $scope "namespaced") (not $switch) }}
{{- $picked = append $picked . }}
{{- else if and (eq $scope "cluster") $switch (get $reads $switch) }}
{{- $picked = append $picked . }}
{{- end }}
{{- end }}
{{- if $picked }}
- apiGroups: {{ .apiGroups | toJson }}
  resources: {{ $picked | toJson }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The design's Helm values that netsight does not take: refused with what replaced them, rather
than ignored (values.schema.json lets them through to here so that the message can say so).
*/}}
{{- define "netsight.refuseDesignValues" -}}
{{- if hasKey .Values.config "cacheTTL" }}
{{- fail "config.cacheTTL is not a netsight setting: netsight keeps no answer cache (every answer comes from the live graph, which its watches keep current); remove it" }}
{{- end }}
{{- $replacements := dict "enableIstio" "istio" "enableCilium" "cilium" "enableGatewayAPI" "gatewayAPI" "enableKuma" "kuma" "enableLinkerd" "linkerd" "enableCalico" "calico" }}
{{- range $key, $_ := .Values.features }}
{{- if hasPrefix "enable" $key }}
{{- if eq $key "enableFlannel" }}
{{- fail "features.enableFlannel is not a netsight setting: Flannel has no policy or routing objects for netsight to read; remove it" }}
{{- else if hasKey $replacements $key }}
{{- fail (printf "features.%s was replaced by features.%s (true or false): every provider is detected from its CRDs at run time, as `auto` meant; false withholds the RBAC to read its kinds" $key (get $replacements $key)) }}
{{- else }}
{{- fail (printf "features.%s is not a netsight setting; the provider switches are features.<provider>: true or false (helm show values lists them)" $key) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
KNOWLEDGE_DB: off, the PostgreSQL URL given, or the SQLite file on the knowledge volume.
*/}}
{{- define "netsight.knowledgeDb" -}}
{{- if not .Values.knowledge.enabled -}}
off
{{- else if .Values.knowledge.url -}}
{{ .Values.knowledge.url }}
{{- else -}}
/var/lib/netsight/knowledge.db
{{- end -}}
{{- end }}

{{/*
Non-empty when the knowledge base is a SQLite file that needs the knowledge volume.
*/}}
{{- define "netsight.knowledgeFile" -}}
{{- if and .Values.knowledge.enabled (not .Values.knowledge.url) -}}
true
{{- end -}}
{{- end }}
