import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { readConfig } from "../api";
import "../styles/base.css";
import "../styles/list.css";
import { ListApp } from "./ListApp";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <ListApp config={readConfig()} />
    </StrictMode>,
  );
}
