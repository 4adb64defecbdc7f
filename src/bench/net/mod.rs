//! Network throughput: an iperf3-compatible client and server.
