//! HORUS PATCH (HORUS-PATCH.md, item 5): an entry point for horus's fuzz target
//! `rtps_message` (fuzz/fuzz_targets/rtps_message.rs), compiled only with the feature
//! `horus-fuzz`. It runs a received UDP datagram through what a participant's receive path
//! does with it before any reader or discovery state is involved: the checks of
//! `MessageReceiver::handle_received_packet`, `Message::read_from_buffer`, each DATA's
//! serialized payload through `SerializedPayload::from_bytes`, and each DATA_FRAG through
//! the admission checks of `Reader::admit_datafrag` (a stateless reader's: oversize, too
//! many fragments, the reader's and the process's budgets with the assembler's eviction) and a
//! `FragmentAssembler`, with the NACK_FRAG scan (`missing_frags_for`) a HEARTBEAT triggers
//! for every sample left in reassembly.

use bytes::Bytes;

use crate::{
  horus_reassembly,
  messages::submessages::{
    elements::serialized_payload::SerializedPayload,
    submessages::{DataFrag, WriterSubmessage},
  },
  rtps::{fragment_assembler::FragmentAssembler, Message, SubmessageBody},
};

// message_receiver.rs's (private) RTPS_MESSAGE_HEADER_SIZE.
const RTPS_MESSAGE_HEADER_SIZE: usize = 20;

/// What [`parse_datagram`] made of a datagram.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
  /// Whether `Message::read_from_buffer` accepted the datagram.
  pub message: bool,
  /// Its submessages.
  pub submessages: usize,
  /// DATA_FRAG submessages the admission checks refused.
  pub fragments_refused: usize,
  /// Samples the fragment assembler completed.
  pub samples_completed: usize,
  /// Samples left in reassembly.
  pub samples_open: usize,
  /// What the samples left in reassembly are charged (`horus_reassembly::cost`).
  pub reserved: usize,
  /// What the process's samples in reassembly held of its budget
  /// (`horus_reassembly::held_in_process`) while this datagram's were still open.
  pub held_in_process: usize,
}

/// Parses `bytes` as a datagram from a DDS peer and feeds its DATA_FRAG submessages to one
/// fragment assembler (of a reliable reader if `reliable`), as a reader of every writer.
pub fn parse_datagram(bytes: &[u8], reliable: bool) -> Parsed {
  let mut parsed = Parsed::default();
  // handle_received_packet's checks before the parser.
  if bytes.len() < RTPS_MESSAGE_HEADER_SIZE || &bytes[0..4] != b"RTPS" {
    return parsed;
  }
  let Ok(message) = Message::read_from_buffer(&Bytes::copy_from_slice(bytes)) else {
    return parsed;
  };
  parsed.message = true;
  parsed.submessages = message.submessages.len();

  let mut assembler = FragmentAssembler::new(reliable);
  let mut open = Vec::new();
  for submessage in &message.submessages {
    match &submessage.body {
      SubmessageBody::Writer(WriterSubmessage::Data(data, _flags)) => {
        if let Some(payload) = &data.serialized_payload {
          let _ = SerializedPayload::from_bytes(payload);
        }
      }
      SubmessageBody::Writer(WriterSubmessage::DataFrag(datafrag, flags)) => {
        if !assembler.is_partially_received(datafrag.writer_sn) && !admit(&mut assembler, datafrag)
        {
          parsed.fragments_refused += 1;
          continue;
        }
        if assembler.new_datafrag(datafrag, *flags).is_some() {
          parsed.samples_completed += 1;
        } else if assembler.is_partially_received(datafrag.writer_sn) {
          open.push(datafrag.writer_sn);
        }
      }
      _ => {}
    }
  }
  parsed.reserved = assembler.reserved();
  parsed.held_in_process = horus_reassembly::held_in_process();
  open.sort();
  open.dedup();
  for sn in open {
    if assembler.is_partially_received(sn) {
      parsed.samples_open += 1;
      let _ = assembler.missing_frags_for(sn).count();
    }
  }
  parsed
}

// Reader::admit_datafrag for a fragment opening a reassembly, with one writer and no
// matching (a stateless reader's): the same checks in the same order.
fn admit(assembler: &mut FragmentAssembler, datafrag: &DataFrag) -> bool {
  let data_size = datafrag.data_size as usize;
  if data_size > horus_reassembly::max_sample_size()
    || horus_reassembly::too_many_fragments(data_size, datafrag.fragment_size)
  {
    return false;
  }
  let fragments = usize::from(datafrag.total_number_of_fragments());
  let cost = horus_reassembly::cost(data_size, fragments);
  let budget = horus_reassembly::budget_per_reader();
  let fits = |held: usize, freed: usize| {
    held.saturating_sub(freed).saturating_add(cost) <= budget
      && horus_reassembly::process_has_room_after_freeing(cost, freed)
  };
  // Evicts only when giving up all it may would make enough room (HORUS-PATCH item 15).
  if fits(assembler.reserved(), assembler.evictable_for(datafrag.writer_sn)) {
    while !fits(assembler.reserved(), 0) {
      if !assembler.evict_one_for(datafrag.writer_sn) {
        break;
      }
    }
  }
  fits(assembler.reserved(), 0)
}
