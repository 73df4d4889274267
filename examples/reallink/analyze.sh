#!/bin/bash
# analyze.sh PREFIX : per pod of that name prefix: uid, first seen, first Running, final phase (and when), sbatch count, scancel count, job ids
pfx=$1; L=${REALLINK:-/tmp/reallink}/logs/phases.log; C=${REALLINK:-/tmp/reallink}/slurm/calls.log
printf '%-14s %-8s %7s %7s %-10s %7s %6s %7s %s\n' pod uid8 run_s phase end_s sbatch scancel jobs states
for uid in $(grep " $pfx" $L | awk '{print $3}' | awk '!s[$0]++'); do
  name=$(grep " $uid " $L | head -1 | awk '{print $2}')
  t0=$(grep " $uid " $L | head -1 | awk '{print $1}')
  tr=$(grep " $uid Running" $L | head -1 | awk '{print $1}')
  last=$(grep " $uid " $L | grep -v GONE | tail -1); ph=$(echo "$last" | awk '{print $4}')
  te=$(grep " $uid $ph" $L | head -1 | awk '{print $1}')
  gone=$(grep " $uid GONE" $L | head -1 | awk '{print $1}')
  [ -n "$gone" ] && ph="$ph>GONE" && te=$gone
  jobs=$(grep "sbatch job=.* name=$uid " $C | sed 's/.*job=\([0-9]*\).*/\1/' | tr '\n' ',')
  nsb=$(grep -c "sbatch job=.* name=$uid " $C)
  nsc=0; st=""
  for j in ${jobs//,/ }; do nsc=$((nsc + $(grep -c "scancel job=$j " $C))); st="$st$(cat ${REALLINK:-/tmp/reallink}/slurm/jobs/$j/state),"; done
  d() { [ -n "$1" ] && echo "$1 - $t0" | bc | xargs printf '%.1f' || echo -; }
  printf '%-14s %-8s %7s %7s %-10s %7s %6s %7s %s\n' "$name" "${uid:0:8}" "$(d $tr)" "" "$ph" "$(d $te)" "$nsb" "$nsc" "$jobs $st"
done
