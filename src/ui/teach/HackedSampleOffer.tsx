// After the reward-hacking preset's β = 0 run: its last iteration was captured, and one click
// opens the inspector on the response that scored best while drifting furthest from the reference.
import { useApp } from '../../store/appStore.ts';
import { useInspection } from '../../store/inspection.ts';
import './hackedOffer.css';

export function HackedSampleOffer({ onOpen }: { onOpen: () => void }) {
  const hacked = useInspection((s) => s.hacked);
  const focusOn = useInspection((s) => s.focusOn);
  const runName = useApp((s) => s.runs.find((r) => r.id === hacked?.runId)?.name);
  if (!hacked || runName === undefined) return null;
  return (
    <p className="hacked-offer small" role="status" data-testid="hacked-offer">
      <span>
        “{runName}” ended at iteration {hacked.iter}, captured: its best-scored response among those furthest from the reference is a reward hack.
      </span>
      <button
        type="button"
        className="btn small primary"
        onClick={() => {
          focusOn(hacked);
          onOpen();
        }}
      >
        Inspect a hacked sample
      </button>
    </p>
  );
}
