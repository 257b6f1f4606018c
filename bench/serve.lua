-- wrk script of bench/bench_serve.py: POST one binary infer request (the
-- body file and its JSON header length come from the environment) and
-- print one JSON line with throughput, latency percentiles and errors.
local f = assert(io.open(os.getenv("SERVE_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.headers["Inference-Header-Content-Length"] = os.getenv("SERVE_HEADER_LEN")

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      '{"requests":%d,"duration_us":%d,"socket_errors":%d,"http_errors":%d,' ..
      '"p50_us":%d,"p99_us":%d}\n',
      summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout,
      e.status, latency:percentile(50), latency:percentile(99)))
end
