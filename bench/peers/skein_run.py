"""Runs one skein application of N containers running COMMAND and waits for its final
status (bench/peers). Prints 'APP_ID FINAL_STATUS' on stdout; exit 0 iff SUCCEEDED.
usage: skein_run.py N COMMAND"""
import sys
import time

import skein

n, command = int(sys.argv[1]), sys.argv[2]
spec = skein.ApplicationSpec(
    name="bench-peers-skein",
    queue="default",
    master=skein.Master(resources=skein.Resources(memory=512, vcores=1)),
    services={
        "task": skein.Service(
            instances=n,
            resources=skein.Resources(memory=128, vcores=1),
            script=command,
        )
    },
)
with skein.Client() as client:
    app_id = client.submit(spec)
    while True:
        report = client.application_report(app_id)
        if str(report.final_status).upper() != "UNDEFINED":
            break
        time.sleep(0.1)
final = str(report.final_status).upper()
print(app_id, final)
sys.exit(0 if final == "SUCCEEDED" else 1)
