// Test support for the host-simulated GPU: an example XDP object loaded as `knod run` loads
// it (loader, <name>.maps.json preload, xdp::Runtime with one CPU, pinned clock and seed),
// and a capture run on the CPU JIT (packet by packet, in order) or on a gpu::BatchDevice in
// batches, with everything a packet and the maps end up as.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/gpu/batch_device.h"
#include "loader/object.h"
#include "xdp/runtime.h"

namespace knod::gpu_test {

/// Frames of a capture that `knod run` runs (>= ETH_HLEN bytes), in file order.
std::vector<std::vector<uint8_t>> read_frames(const std::string& pcap);

/// What a run left: per packet verdict, redirect, fault and bytes; every map's contents.
struct SimOutcome {
  std::vector<uint32_t> verdict;
  std::vector<uint64_t> redirect;
  std::vector<uint8_t> fault;
  std::vector<std::vector<uint8_t>> bytes;  ///< packet data after the program
  std::vector<std::map<std::vector<uint8_t>, std::vector<uint8_t>>> maps;  ///< by map index
};

/// A loaded example: object (maps preloaded from `maps_json` if not empty) and runtime, with
/// `ncpus` per-CPU slots.
struct LoadedExample {
  LoadedExample(const std::string& obj_path, const std::string& prog, const std::string& maps_json,
                uint32_t ncpus = 1);
  loader::Object obj;
  std::unique_ptr<xdp::Runtime> rt;
  size_t entry = 0;  ///< index of the program in rt->env().programs
};

/// Runs `frames` one by one, in order, on the CPU JIT (xdp::Runtime::run_packet); packet i
/// as CPU i % ncpus (the GPU devices' virtual CPU of lane i).
SimOutcome run_on_cpu(LoadedExample& ex, const std::vector<std::vector<uint8_t>>& frames,
                      uint32_t ncpus = 1);
/// Runs `frames` on `dev` (load, then batches of `batch` packets).
SimOutcome run_on_device(LoadedExample& ex, device::gpu::BatchDevice& dev,
                         const std::vector<std::vector<uint8_t>>& frames, uint32_t batch);

/// gtest expectations: `got` has `want`'s verdict, redirect, fault and bytes per packet and
/// the same map contents (names from `obj`).
void expect_same(const SimOutcome& got, const SimOutcome& want, const loader::Object& obj);

/// How run_on_session feeds a persistent session.
struct SessionPlan {
  std::vector<uint32_t> sizes{7};  ///< batch sizes, cycled until the frames run out (0: empty)
  device::gpu::PersistentOptions opts;
  bool complete_before_stop = true;            ///< false: stop() with the batches still in flight
  std::vector<uint64_t>* completed = nullptr;  ///< gets complete()'s numbers, in order
  /// Called after the first batch is submitted (the session is running), e.g. to read maps.
  std::function<void()> during;
};

/// Runs `frames` on `dev` in a persistent session (load, start_persistent, every batch
/// submitted without waiting, complete() until nullopt if asked, stop()).
SimOutcome run_on_session(LoadedExample& ex, device::gpu::BatchDevice& dev,
                          const std::vector<std::vector<uint8_t>>& frames, const SessionPlan& plan);

}  // namespace knod::gpu_test
