//! Times one plugin component on one file, call by call, under the engine
//! settings kebab's runtime chooses between, and can expose the JIT code to
//! `perf`. Used for BENCHMARKS.md "Where WASM parse time goes".
//!
//! ```sh
//! cargo run --release --manifest-path tools/wasm-profile/Cargo.toml -- \
//!     PLUGIN.wasm FILE [SECONDS] [--pool KEEP_MIB] [--pagemap] [--epoch] [--perfmap]
//! ```
//!
//! Prints µs per file: fresh instance, `parse`, `chunk-document`, and the
//! rest (dropping the store, which resets or unmaps the instance's memory).
//! `--pool` uses the pooling allocator keeping `KEEP_MIB` of each memory
//! resident, `--pagemap` resets only touched pages (Linux 6.7+), `--epoch`
//! compiles in epoch interruption as kebab does, `--perfmap` writes
//! `/tmp/perf-PID.map` so `perf report` names the guest's functions.

use std::time::{Duration, Instant};

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig,
    ProfilingStrategy, Store,
};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

wasmtime::component::bindgen!({ path: "../../wit/v1.1.0", world: "plugin" });

use exports::kebab::plugin::parser::ChunkPolicy;

/// A store's state: WASI with nothing granted, logs and settings empty.
struct Guest {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Guest {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl kebab::plugin::log::Host for Guest {
    fn log(&mut self, _level: kebab::plugin::log::Level, _message: String) {}
}

impl kebab::plugin::settings::Host for Guest {
    fn get(&mut self, _key: String) -> Option<String> {
        None
    }
}

impl kebab::plugin::types::Host for Guest {}

/// Command line.
struct Args {
    wasm: String,
    file: String,
    seconds: f64,
    keep_mib: Option<usize>,
    pagemap: bool,
    epoch: bool,
    perfmap: bool,
}

fn args() -> Args {
    let mut positional = Vec::new();
    let mut args = Args {
        wasm: String::new(),
        file: String::new(),
        seconds: 3.0,
        keep_mib: None,
        pagemap: false,
        epoch: false,
        perfmap: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--pool" => args.keep_mib = it.next().and_then(|v| v.parse().ok()),
            "--pagemap" => args.pagemap = true,
            "--epoch" => args.epoch = true,
            "--perfmap" => args.perfmap = true,
            _ => positional.push(a),
        }
    }
    let usage = "usage: kebab-wasm-profile PLUGIN.wasm FILE [SECONDS] [--pool KEEP_MIB] [--pagemap] [--epoch] [--perfmap]";
    args.wasm = positional.first().expect(usage).clone();
    args.file = positional.get(1).expect(usage).clone();
    if let Some(s) = positional.get(2) {
        args.seconds = s.parse().expect(usage);
    }
    args
}

fn engine(args: &Args) -> wasmtime::Result<Engine> {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(args.epoch);
    if args.perfmap {
        config.profiler(ProfilingStrategy::PerfMap);
    }
    if let Some(keep) = args.keep_mib {
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(4)
            .total_core_instances(64)
            .total_memories(8)
            .total_tables(64)
            .total_stacks(4)
            .linear_memory_keep_resident(keep << 20)
            .table_keep_resident(keep << 20)
            .pagemap_scan(if args.pagemap {
                Enabled::Yes
            } else {
                Enabled::No
            });
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    Engine::new(&config)
}

fn main() -> wasmtime::Result<()> {
    let args = args();
    let bytes = std::fs::read(&args.file)?;
    let engine = engine(&args)?;
    let component = Component::new(&engine, std::fs::read(&args.wasm)?)?;
    let mut linker = Linker::<Guest>::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    Plugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |g| g)?;
    let pre = PluginPre::new(linker.instantiate_pre(&component)?)?;
    let policy = ChunkPolicy {
        target_tokens: 500,
        overlap_tokens: 80,
    };
    let mut spent = [Duration::ZERO; 3];
    let mut calls = 0u32;
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < args.seconds {
        let t0 = Instant::now();
        let guest = Guest {
            wasi: WasiCtxBuilder::new().build(),
            table: ResourceTable::new(),
        };
        let mut store = Store::new(&engine, guest);
        store.set_epoch_deadline(u64::MAX / 2);
        let plugin = pre.instantiate(&mut store)?;
        let t1 = Instant::now();
        let parser = plugin.kebab_plugin_parser();
        let document = parser
            .call_parse(&mut store, &args.file, &bytes)?
            .map_err(|e| wasmtime::format_err!("parse: {e:?}"))?;
        let t2 = Instant::now();
        let chunks = parser
            .call_chunk_document(&mut store, &document, policy)?
            .map_err(|e| wasmtime::format_err!("chunk-document: {e:?}"))?;
        spent[0] += t1 - t0;
        spent[1] += t2 - t1;
        spent[2] += t2.elapsed();
        std::hint::black_box(chunks);
        drop(store);
        calls += 1;
    }
    let per_call = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(calls);
    let total = per_call(start.elapsed());
    println!(
        "{total:.1} µs/file: instantiate {:.1} · parse {:.1} · chunk-document {:.1} · drop {:.1} ({calls} files)",
        per_call(spent[0]),
        per_call(spent[1]),
        per_call(spent[2]),
        total - per_call(spent[0] + spent[1] + spent[2]),
    );
    Ok(())
}
