{{/* Names, labels and the wiring every template shares. */}}

{{- define "coin-network.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "coin-network.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "coin-network.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "coin-network.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "coin-network.selectorLabels" -}}
app.kubernetes.io/name: {{ include "coin-network.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The StatefulSet, and its headless Service (the same name, as Kubernetes wants). */}}
{{- define "coin-network.nodes" -}}
{{- printf "%s-node" (include "coin-network.fullname" .) }}
{{- end }}

{{/* The network's ports: {rpcPort, p2pPort}; fails on an unknown chain. */}}
{{- define "coin-network.ports" -}}
{{- $c := .Values.global.chain }}
{{- if not (has $c (list "mainnet" "testnet" "regtest")) }}
{{- fail (printf "global.chain %q: want mainnet, testnet or regtest" $c) }}
{{- end }}
{{- toJson (index .Values.global $c) }}
{{- end }}

{{/* Number of nodes: replicas, or more when the nodes: list is longer. */}}
{{- define "coin-network.count" -}}
{{- max (int .Values.replicas) (len .Values.nodes) }}
{{- end }}

{{/* The DNS name of the headless Service: it answers with every node, the DNS seed. */}}
{{- define "coin-network.seed" -}}
{{- printf "%s.%s.svc.%s" (include "coin-network.nodes" .) .Release.Namespace .Values.global.clusterDomain }}
{{- end }}

{{/* A peer for --addnode: "node-N" of this chart becomes that pod's DNS name and P2P port; a
host:port is kept as it is. Called with (dict "ctx" $ "peer" NAME). */}}
{{- define "coin-network.peer" -}}
{{- $ctx := .ctx }}
{{- $p := toString .peer }}
{{- if contains ":" $p }}
{{- $p }}
{{- else }}
{{- if not (regexMatch "^node-[0-9]+$" $p) }}
{{- fail (printf "addnode %q: want node-N (a node of this chart) or HOST:PORT" $p) }}
{{- end }}
{{- $ports := include "coin-network.ports" $ctx | fromJson }}
{{- printf "%s-%s.%s:%d" (include "coin-network.fullname" $ctx) $p (include "coin-network.seed" $ctx) (int $ports.p2pPort) }}
{{- end }}
{{- end }}

{{/* The per-node RPC Service of node N (miners and the faucet call it). */}}
{{- define "coin-network.rpcService" -}}
{{- printf "%s-rpc-%d" (include "coin-network.fullname" .ctx) (int .node) }}
{{- end }}

{{/* The environment of a client of node N's RPC: the URL through the node's Service by its DNS
name (each node lists its Service's names with rpc-allow-host, see rpcHosts, as its RPC server
accepts no other DNS name as the Host header) and the credentials from the RPC Secret. Called
with (dict "ctx" $ "node" N). */}}
{{- define "coin-network.rpcClientEnv" -}}
{{- $ports := include "coin-network.ports" .ctx | fromJson }}
- name: COIN_RPC
  value: {{ printf "http://%s:%d" (include "coin-network.rpcService" .) (int $ports.rpcPort) | quote }}
- name: COIN_RPC_USER
  valueFrom:
    secretKeyRef: {name: {{ include "coin-network.rpcSecret" .ctx }}, key: rpc-user}
- name: COIN_RPC_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ include "coin-network.rpcSecret" .ctx }}, key: rpc-password}
{{- end }}

{{/* The DNS names clients may call node N's RPC by (its rpc-allow-host lines): its RPC
Service's name in the namespace and in full, and its pod's name under the headless Service,
short and in full. Called with (dict "ctx" $ "node" N). */}}
{{- define "coin-network.rpcHosts" -}}
{{- $ctx := .ctx }}
{{- $svc := include "coin-network.rpcService" . }}
{{- $pod := printf "%s-%d.%s" (include "coin-network.nodes" $ctx) (int .node) (include "coin-network.nodes" $ctx) }}
{{- $suffix := printf "%s.svc.%s" $ctx.Release.Namespace $ctx.Values.global.clusterDomain }}
{{- toJson (list $svc (printf "%s.%s" $svc $suffix) $pod (printf "%s.%s" $pod $suffix)) }}
{{- end }}

{{- define "coin-network.rpcSecret" -}}
{{- if .Values.rpc.create }}
{{- printf "%s-rpc" (include "coin-network.fullname" .) }}
{{- else }}
{{- required "rpc.existingSecret: name the Secret with rpc-auth, rpc-user and rpc-password (or set rpc.create)" .Values.rpc.existingSecret }}
{{- end }}
{{- end }}

{{- define "coin-network.image" -}}
{{- printf "%s:%s" .Values.image.repository (toString (default .Chart.AppVersion .Values.image.tag)) }}
{{- end }}
