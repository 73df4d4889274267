# shared by the fakes
STATE=${FAKE_SLURM_STATE:-${REALLINK:-/tmp/reallink}/slurm}
MINJOBAGE=${FAKE_MIN_JOB_AGE:-60}
mkdir -p "$STATE/jobs"
now() { date +%s.%N; }
logcall() { printf '%s %s\n' "$(now)" "$*" >> "$STATE/calls.log"; }
jobstate() { cat "$STATE/jobs/$1/state" 2>/dev/null; }
# purged: ended more than MinJobAge ago
purged() {
  local d="$STATE/jobs/$1"
  [ -f "$d/end" ] || return 1
  local e; e=$(cut -d. -f1 < "$d/end")
  [ $(( $(date +%s) - e )) -gt "$MINJOBAGE" ]
}
compact() {
  case "$1" in PENDING) echo PD;; RUNNING) echo R;; COMPLETED) echo CD;; FAILED) echo F;;
    CANCELLED) echo CA;; TIMEOUT) echo TO;; COMPLETING) echo CG;; *) echo "$1";; esac
}
