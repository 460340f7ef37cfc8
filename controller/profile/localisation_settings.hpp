// A test's `localisation:` key (docs/profile.md): the noise floor, the rate of loss or damage
// (and the delay) under which a link is not named. A night at line rate meets the odd lost or damaged frame on a
// healthy link (a BER of 1e-13 is caught once in any long enough run); the floor is the rate the
// operator accepts, as UFM's thresholds and IEEE 802.3's BER objectives are: a link is a suspect
// only when its rate is above it with 99.9 % confidence (the localiser's
// kFloorConfidence). Plain data.
#pragma once

namespace tusk {

// Shares of the frames that cross a link.
struct NoiseFloor {
  // Loss: a RoCE fabric's goodput is untouched by loss under about 1e-5 of its frames; a tenth of
  // that keeps a margin and still names a link that loses one frame in 100,000.
  static constexpr double kDefaultLoss = 1e-6;
  // Damage (frames whose payload arrived with bit errors): IEEE 802.3's BER objective of 1e-12 on
  // frames of about 10,000 bits (1,250 B) is a frame error ratio of 1e-8.
  static constexpr double kDefaultDamage = 1e-8;
  // The highest floor a profile may set: past 1 %, a link that loses one frame in a hundred would
  // still be noise.
  static constexpr double kMax = 0.01;

  // Delay a link adds to its flows' latency: a switch hop adds about a microsecond and a queue
  // that builds adds tens to hundreds; 10 us names a link that queues, never one hop's own time.
  static constexpr double kDefaultDelayNs = 10'000;
  static constexpr double kMaxDelayNs = 1e9;

  double loss = kDefaultLoss;
  double damage = kDefaultDamage;
  double delay_ns = kDefaultDelayNs;
};

struct LocalisationSettings {
  NoiseFloor min_rate;
};

}  // namespace tusk
