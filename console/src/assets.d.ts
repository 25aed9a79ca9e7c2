// esbuild bundles imported CSS into assets/app.css.
declare module "*.css";
