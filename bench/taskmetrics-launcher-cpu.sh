#!/bin/sh
# CPU time (user+system, ticks of 10 ms) of `tfyarn run --local` (client, AM and launcher in one
# process) over a 60 s task whose program is sh with 10 sleeping children.
bin=$1
prog='for i in 1 2 3 4 5 6 7 8 9 10; do sleep 60 & done; wait'
$bin run --local --worker 1c,256m -- sh -c "$prog" >/dev/null 2>&1 &
pid=$!
sleep 58
awk '{print $14+$15}' /proc/$pid/stat
wait $pid
