# Shared by the callgrind-*.sh scripts (sourced, not run): instruction counts of "$bin".
count() { # args... -> total instructions of one run of "$bin" with those arguments
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" "$@" >/dev/null 2>&1
    callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
    rm -f "$out"
}
per_pass() { # args... -> instructions of one pass: runs with 1 and 3 passes, the difference halved
    local a b
    a=$(count "$@" 1)
    b=$(count "$@" 3)
    echo $(( (b - a) / 2 ))
}
