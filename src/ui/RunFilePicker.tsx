// A button that picks a run file (store/runFiles.ts) from the disk and opens it as a recorded run;
// `onResult` hears what opening it gave (the run, or null and the refusal's words).
import { useRef } from 'react';
import { type OpenedRunFile, openRunFile } from '../store/runFiles.ts';

export function RunFilePicker({
  label,
  className,
  title,
  testId,
  onResult,
}: {
  label: string;
  className: string;
  title?: string;
  testId: string;
  onResult?: (r: OpenedRunFile) => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" className={className} data-testid={testId} title={title} onClick={() => input.current?.click()}>
        {label}
      </button>
      <input
        ref={input}
        type="file"
        accept=".json,application/json"
        hidden
        data-testid={`${testId}-input`}
        onChange={async (e) => {
          const file = e.currentTarget.files?.[0];
          e.currentTarget.value = '';
          if (!file) return;
          const r = await openRunFile(file);
          onResult?.(r);
        }}
      />
    </>
  );
}
