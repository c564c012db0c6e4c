"""Runs one skein application of N containers running COMMAND and waits for its final
status (bench/peers). Prints 'APP_ID FINAL_STATUS' on stdout; exit 0 iff SUCCEEDED.
usage: skein_run.py N COMMAND [MEMORY_MIB [ENV_ARCHIVE]]
ENV_ARCHIVE (a local .tar.gz) is shipped as an archive unpacked into ./env/ of each container."""
import sys
import time

import skein

n, command = int(sys.argv[1]), sys.argv[2]
memory = int(sys.argv[3]) if len(sys.argv) > 3 else 128
files = {}
if len(sys.argv) > 4:
    files["env"] = skein.File(source=sys.argv[4], type="archive")
spec = skein.ApplicationSpec(
    name="bench-peers-skein",
    queue="default",
    master=skein.Master(resources=skein.Resources(memory=512, vcores=1)),
    services={
        "task": skein.Service(
            instances=n,
            resources=skein.Resources(memory=memory, vcores=1),
            files=files,
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
