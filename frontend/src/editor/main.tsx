import { ReactFlowProvider } from "@xyflow/react";
import "@xyflow/react/dist/base.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { readConfig } from "../api";
import "../styles/base.css";
import "../styles/editor.css";
import "../styles/canvas.css";
import "../styles/cards.css";
import "../styles/side-panel.css";
import "../styles/panel-tabs.css";
import { EditorApp } from "./EditorApp";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <ReactFlowProvider>
        <EditorApp config={readConfig()} />
      </ReactFlowProvider>
    </StrictMode>,
  );
}
