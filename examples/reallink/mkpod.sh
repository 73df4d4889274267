#!/bin/bash
export KUBECONFIG=${REALLINK:-/tmp/reallink}/env/kubeconfig
# mkpod.sh NAME SLEEP_SECONDS [NODE] [extra jq filter applied to the pod]
name=$1; secs=$2; node=${3:-vk-slurm}; extra=${4:-.}
jq -n --arg name "$name" --arg node "$node" --arg cmd "sleep $secs" '{
  apiVersion:"v1", kind:"Pod", metadata:{name:$name, namespace:"default"},
  spec:{ nodeSelector:{"kubernetes.io/hostname":$node},
    tolerations:[{key:"virtual-node.interlink/no-schedule",operator:"Exists",effect:"NoSchedule"},
                 {key:"virtual-node.example.com/site",operator:"Exists",effect:"NoSchedule"}],
    restartPolicy:"Never", terminationGracePeriodSeconds:0,
    containers:[{name:"job", image:"busybox:1.36", command:["/bin/sh","-c",$cmd],
      resources:{requests:{cpu:"100m"}}}]}}' | jq "$extra" | kubectl apply -f - >/dev/null && echo "created $name"
