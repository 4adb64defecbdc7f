// The CLI's units, the page's one vocabulary: what src/units.rs and
// history::store::{format_value, format_ts} print, written again in the
// page's language (src/cli/page_units_tests.rs runs both on the same values and
// requires the same text). Rates in bit/s with SI prefixes, sizes in IEC
// bytes, times in UTC as `hlctl history` prints them.

// The binary exponent of x once its mantissa is odd: x = odd · 2^e.
function oddExponent(x) {
    const b = new DataView(new ArrayBuffer(8));
    b.setFloat64(0, x);
    const hi = b.getUint32(0);
    const biased = (hi >>> 20) & 0x7ff;
    let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(b.getUint32(4));
    let e = biased === 0 ? -1074 : biased - 1075;
    if (biased !== 0)
        m |= 1n << 52n;
    while (m > 0n && (m & 1n) === 0n) {
        m >>= 1n;
        e += 1;
    }
    return e;
}

// x with `digits` decimals as Rust's `{:.N}` writes it: toFixed rounds an
// exact tie (1.125 to 2 decimals) up, Rust to the even digit. x · 10^d is
// an exact tie when x = odd · 2^e with e + d = -1.
function fixed(x, digits) {
    if (x > 0 && Number.isFinite(x) && oddExponent(x) + digits === -1) {
        const scaled = Math.floor(x * 10 ** digits);
        if (scaled % 2 === 0)
            return (scaled / 10 ** digits).toFixed(digits);
    }
    return x.toFixed(digits);
}

// `941 Mbit/s`, `1.66 Gbit/s` (units::bps).
export function bps(v) {
    if (!Number.isFinite(v))
        return "–";
    if (v >= 1e9)
        return `${fixed(v / 1e9, 2)} Gbit/s`;
    if (v >= 1e6)
        return `${fixed(v / 1e6, 0)} Mbit/s`;
    if (v >= 1e3)
        return `${fixed(v / 1e3, 0)} kbit/s`;
    return `${fixed(v, 0)} bit/s`;
}

// A link speed in whole Mb/s as the driver reports it: `100 Mbit/s`,
// `2.5 Gbit/s` (units::speed).
export function speed(mbps) {
    if (mbps < 1000)
        return `${mbps} Mbit/s`;
    const g = fixed(mbps / 1000, 3).replace(/0+$/, "").replace(/\.$/, "");
    return `${g} Gbit/s`;
}

// `64.0 KiB` (units::bytes; whole bytes).
export function bytes(n) {
    const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    n = Math.max(0, Math.trunc(n));
    let v = n;
    let u = 0;
    while (v >= 1024 && u < UNITS.length - 1) {
        v /= 1024;
        u += 1;
    }
    return u === 0 ? `${n} B` : `${fixed(v, 1)} ${UNITS[u]}`;
}

// A stored metric's value in its unit (history::store::format_value).
export function value(v, unit) {
    if (!Number.isFinite(v))
        return "–";
    if (unit === "bit/s")
        return bps(v);
    if (unit === "B/s")
        return `${bytes(v)}/s`;
    return `${fixed(v, 0)} ${unit}`;
}

// A workload layer's figure as `hlctl doctor --workload` prints it
// (workload::needs::Layer::format): `100 Mbit/s`, `12.5 MB/s`, `500 IOPS`,
// `1500 events/s`.
export function layer(v, name) {
    if (!Number.isFinite(v))
        return "–";
    switch (name) {
    case "net": return bps(v);
    case "disk-read": return `${fixed(v / 1e6, 1)} MB/s`;
    case "disk-randread": return `${fixed(v, 0)} IOPS`;
    default: return `${fixed(v, 0)} events/s`;
    }
}

const two = n => String(n).padStart(2, "0");

// Unix seconds as `2026-12-04 14:05:09`, UTC (history::store::format_ts).
export function utc(ts) {
    const d = new Date(ts * 1000);
    return `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ` +
        `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}
