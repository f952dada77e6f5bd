import { useEffect, useRef, useState, type RefObject } from "react";

/**
 * The outcome of a form that is gone once saved or deleted ("Deleted environment gpu."): shown as
 * a status, and focused when it changes so that keyboard and screen-reader users land on it.
 * `useNotice` keeps the text; `<Notice>` shows it.
 */
export function useNotice(): { notice: string | null; setNotice: (text: string | null) => void; noticeRef: RefObject<HTMLDivElement | null> } {
  const [notice, setNotice] = useState<string | null>(null);
  const noticeRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (notice) noticeRef.current?.focus();
  }, [notice]);
  return { notice, setNotice, noticeRef };
}

export function Notice({ notice, noticeRef }: { notice: string | null; noticeRef: RefObject<HTMLDivElement | null> }) {
  if (!notice) return null;
  return (
    <div className="env-notice" role="status" ref={noticeRef} tabIndex={-1}>
      {notice}
    </div>
  );
}
