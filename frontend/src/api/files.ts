/** Files in and out of the browser: the content type of an imported file, and a download. */

/** `application/json` for .json files and JSON-looking text, else `application/yaml`. */
export function contentTypeFor(fileName: string, text: string): "application/yaml" | "application/json" {
  if (/\.json$/i.test(fileName)) return "application/json";
  if (/\.ya?ml$/i.test(fileName)) return "application/yaml";
  return /^\s*[[{]/.test(text) ? "application/json" : "application/yaml";
}

/** Saves a blob as a file through a temporary link. */
export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
