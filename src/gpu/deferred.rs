//! Objects that must outlive a command buffer the library recorded into but never submits
//! (staging memory of the weight upload, or device objects a failed creation already referenced).
//!
//! NGX gives the library no fence: the application submits the creation command buffer whenever
//! it likes. So the library records `vkCmdSetEvent` after the commands that use the objects and
//! frees them once the host sees the event set (`vkGetEventStatus`), which it checks at later
//! calls. If the command buffer is never submitted the objects live until their owner goes away
//! (feature release), which the NGX contract makes safe. Knows nothing of what it holds.

use std::any::Any;
use std::sync::Arc;

use ash::vk;

use super::context::GpuContext;
use super::dispatch::Recorder;
use super::error::GpuError;

/// Held objects plus the event that says the GPU is done with them.
pub struct AfterSubmission {
    ctx: Arc<GpuContext>,
    event: vk::Event,
    held: Held,
}

impl AfterSubmission {
    /// Record, after everything already in `rec`, the event that releases `held`. On failure
    /// the objects come back with the error (the caller must then keep them some other way).
    pub fn record(
        ctx: &Arc<GpuContext>,
        rec: &mut Recorder<'_>,
        held: Held,
    ) -> Result<AfterSubmission, (GpuError, Held)> {
        match SpareEvent::new(ctx) {
            Ok(spare) => Ok(spare.record(rec, held)),
            Err(e) => Err((e, held)),
        }
    }

    /// True once the recorded commands have completed (the held objects may then be dropped).
    pub fn done(&self) -> bool {
        matches!(
            // SAFETY: `event` was created on this context's device in `record` (without
            // DEVICE_ONLY, so the host may query it) and is destroyed only when `self` drops.
            unsafe { self.ctx.device().get_event_status(self.event) },
            Ok(true)
        )
    }
}

impl Drop for AfterSubmission {
    fn drop(&mut self) {
        self.held.clear();
        // SAFETY: dropped either after `done()` or by an owner released with no pending work.
        unsafe { self.ctx.device().destroy_event(self.event, None) };
    }
}

/// An event made ahead of recording, so that a caller can refuse a frame before anything is
/// recorded rather than fail after (see `CallerImages::begin_frame`).
pub struct SpareEvent {
    ctx: Arc<GpuContext>,
    event: vk::Event,
}

impl SpareEvent {
    pub fn new(ctx: &Arc<GpuContext>) -> Result<SpareEvent, GpuError> {
        // SAFETY: a valid create info on the caller's live device.
        match unsafe {
            ctx.device()
                .create_event(&vk::EventCreateInfo::default(), None)
        } {
            Ok(event) => Ok(SpareEvent {
                ctx: Arc::clone(ctx),
                event,
            }),
            Err(result) => Err(GpuError::Vk {
                call: "vkCreateEvent",
                result,
            }),
        }
    }

    /// Record the event after everything already in `rec`; it then releases `held`.
    pub fn record(mut self, rec: &mut Recorder<'_>, held: Held) -> AfterSubmission {
        // The event now belongs to the `AfterSubmission`; `self` drops holding a null handle.
        let event = std::mem::replace(&mut self.event, vk::Event::null());
        let ctx = Arc::clone(&self.ctx);
        // SAFETY: the recorder's command buffer is recording on this event's device;
        // ALL_COMMANDS waits for every earlier command in submission order.
        unsafe {
            ctx.device().cmd_set_event(
                rec.command_buffer(),
                event,
                vk::PipelineStageFlags::ALL_COMMANDS,
            )
        };
        AfterSubmission { ctx, event, held }
    }
}

impl Drop for SpareEvent {
    fn drop(&mut self) {
        if self.event != vk::Event::null() {
            // SAFETY: never recorded (recording takes the handle), so no command buffer names it.
            unsafe { self.ctx.device().destroy_event(self.event, None) };
        }
    }
}

/// Objects kept alive by something recorded into a caller's command buffer.
pub type Held = Vec<Box<dyn Any + Send>>;

/// A list of [`AfterSubmission`]s, pruned whenever it is looked at, plus objects that could not
/// get an event (kept until the list itself is dropped).
#[derive(Default)]
pub struct Pending {
    items: Vec<AfterSubmission>,
    forever: Vec<Held>,
}

impl Pending {
    /// Keep `held` until the commands recorded so far in `rec` have run (or, if no event can
    /// be made, until this list is dropped).
    pub fn hold(&mut self, ctx: &Arc<GpuContext>, rec: &mut Recorder<'_>, held: Held) {
        match AfterSubmission::record(ctx, rec, held) {
            Ok(a) => self.items.push(a),
            Err((_, held)) => self.forever.push(held),
        }
    }

    /// [`Pending::hold`] with an event made ahead (so that nothing can fail once recording
    /// began): keep `held` until the commands recorded so far in `rec` have run.
    pub fn hold_with(&mut self, spare: SpareEvent, rec: &mut Recorder<'_>, held: Held) {
        self.items.push(spare.record(rec, held));
    }

    /// Drop every entry whose commands have completed; returns how many are still pending.
    pub fn prune(&mut self) -> usize {
        self.items.retain(|a| !a.done());
        self.items.len()
    }
}
