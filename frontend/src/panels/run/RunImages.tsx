/**
 * Images in the Run panel: the picker (choose or drop a file: it becomes the payload), the input
 * image with the detector's boxes drawn on it, and thumbnails of the images inside a body.
 */
import { useEffect, useState, type DragEvent } from "react";
import { findImages, imageBytesProblem, imageFileProblem, imagePayload, type Box } from "./images";

export function ImagePicker({ onPayload }: { onPayload: (payload: string) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [picked, setPicked] = useState<{ name: string; src: string } | null>(null);
  const [over, setOver] = useState(false);

  // The thumbnail's object URL holds the file in memory: let it go when another replaces it.
  useEffect(() => (picked ? () => URL.revokeObjectURL(picked.src) : undefined), [picked]);

  const take = async (file: File | undefined) => {
    if (!file) return;
    const problem = imageFileProblem(file);
    if (problem) {
      setError(problem);
      return;
    }
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      const notImage = imageBytesProblem(file.name, bytes);
      if (notImage) {
        setError(notImage);
        return;
      }
      const payload = imagePayload(bytes);
      setError(null);
      setPicked({ name: file.name, src: URL.createObjectURL(file) });
      onPayload(payload);
    } catch (err) {
      setError(`Could not read ${file.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  // A browser drops only where both dragenter and dragover were cancelled; elsewhere it would
  // open the file in place of the editor.
  const accept = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
    setOver(true);
  };

  const leave = (e: DragEvent<HTMLDivElement>) => {
    // Moving onto the button or the text inside the zone is no leaving.
    if (!(e.relatedTarget instanceof Node && e.currentTarget.contains(e.relatedTarget))) setOver(false);
  };

  const drop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault();
    setOver(false);
    const file = e.dataTransfer.files[0];
    if (file) void take(file);
    else setError("Drop an image file here: what was dropped is not a file.");
  };

  return (
    <div className={`image-picker${over ? " drag-over" : ""}`} onDragEnter={accept} onDragOver={accept} onDragLeave={leave} onDrop={drop} data-testid="image-drop-zone">
      <label className="btn btn-small image-pick-button">
        Choose an image…
        <input
          type="file"
          accept="image/*"
          className="visually-hidden"
          aria-label="Image file for the payload"
          aria-describedby={error ? "image-picker-error" : undefined}
          onChange={(e) => {
            void take(e.target.files?.[0]);
            e.target.value = "";
          }}
        />
      </label>
      <span className="field-help">or drop one here: it is sent as {'{"instances": [{"image": {"b64": …}}]}'}</span>
      {picked && (
        <span className="image-picked">
          <img src={picked.src} alt={`The picked image, ${picked.name}`} className="image-thumb" />
          <span className="mono small">{picked.name}</span>
        </span>
      )}
      {error && (
        <p id="image-picker-error" className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/** The run's input image with the boxes found on it (and their names, where matched). */
export function InputImage({ src, boxes }: { src: string; boxes: Box[] | null }) {
  const [size, setSize] = useState<{ width: number; height: number } | null>(null);
  const count = boxes?.length ?? 0;
  const caption = boxes === null ? "Input image" : `Input image: ${count} face${count === 1 ? "" : "s"} found`;
  return (
    <figure className="input-image" aria-label={caption}>
      <div className="input-image-frame">
        <img src={src} alt="The image the run sent" onLoad={(e) => setSize({ width: e.currentTarget.naturalWidth, height: e.currentTarget.naturalHeight })} />
        {size && boxes && boxes.length > 0 && (
          <svg className="input-image-boxes" viewBox={`0 0 ${size.width} ${size.height}`} preserveAspectRatio="none" role="img" aria-label={`${count} box${count === 1 ? "" : "es"} drawn`}>
            {boxes.map((b, i) => (
              <g key={i} data-box={`${b.x},${b.y},${b.width},${b.height}`}>
                <rect x={b.x} y={b.y} width={b.width} height={b.height} className="detected-box" vectorEffect="non-scaling-stroke" />
                <title>{`${b.label ?? `face ${i}`}: x ${b.x}, y ${b.y}, ${b.width}×${b.height}`}</title>
              </g>
            ))}
          </svg>
        )}
      </div>
      <figcaption className="small">
        {caption}
        {boxes && boxes.some((b) => b.label) && <> · {boxes.filter((b) => b.label).map((b) => b.label).join(", ")}</>}
      </figcaption>
    </figure>
  );
}

/** Thumbnails of the images inside a body (a detector's crops, an image sent), with their paths. */
export function BodyImages({ value, label }: { value: unknown; label: string }) {
  const images = findImages(value);
  if (images.length === 0) return null;
  return (
    <ul className="body-images" aria-label={`Images in ${label}`}>
      {images.map((image) => (
        <li key={image.path}>
          <img src={image.src} alt={`${label}: ${image.path}`} className="image-thumb" loading="lazy" />
          <span className="mono small">{image.path}</span>
        </li>
      ))}
    </ul>
  );
}
