#!/bin/bash
export KUBECONFIG=${REALLINK:-/tmp/reallink}/env/kubeconfig
# records every phase change of every pod in default: epoch name uid phase node reason
out=${1:-${REALLINK:-/tmp/reallink}/logs/phases.log}
declare -A last
while true; do
  kubectl get pods -n default -o json 2>/dev/null | jq -r '.items[] | "\(.metadata.name) \(.metadata.uid) \(.status.phase) \(.spec.nodeName // "-") \(.metadata.deletionTimestamp // "-") \([.status.containerStatuses[]?.state | keys[0]] | join(","))"' > ${REALLINK:-/tmp/reallink}/logs/.snap
  seen=""
  while read -r n u p nd del cs; do
    k="$n/$u"; v="$p $nd del=$del cs=$cs"; seen="$seen $k"
    if [ "${last[$k]}" != "$v" ]; then echo "$(date +%s.%N | cut -c1-14) $n $u $v" >> $out; last[$k]="$v"; fi
  done < ${REALLINK:-/tmp/reallink}/logs/.snap
  for k in "${!last[@]}"; do case " $seen " in *" $k "*) ;; *) echo "$(date +%s.%N | cut -c1-14) ${k%/*} ${k#*/} GONE" >> $out; unset last[$k];; esac; done
  sleep 0.5
done
